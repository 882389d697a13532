/** Relative time: under an hour in minutes, under a day in hours, else days. */
export function relativeTime(timestampMs: number, now = Date.now()): string {
  const diff = Math.max(0, (now - timestampMs) / 1000)
  if (diff < 3600) return `${Math.max(1, Math.floor(diff / 60))} 分钟前`
  if (diff < 86400) return `${Math.floor(diff / 3600)} 小时前`
  return `${Math.floor(diff / 86400)} 天前`
}

const SUFFIXES = ['k', 'M', 'G', 'T', 'P', 'E']

/** 12345 → "12.3k": suffixes k, M, G, T, P, E. */
export function numberFormatter(num: number, digits = 1): string {
  for (let i = SUFFIXES.length - 1; i >= 0; i--) {
    const unit = Math.pow(1000, i + 1)
    if (Math.abs(num) >= unit) {
      return (num / unit).toFixed(digits).replace(/\.0+$|(\.[0-9]*[1-9])0+$/, '$1') + SUFFIXES[i]
    }
  }
  return String(num)
}

/** Fen (1/100 yuan) as "¥12.34", computed on integers. */
export function formatFen(fen: number): string {
  const sign = fen < 0 ? '-' : ''
  const abs = Math.abs(fen)
  return `${sign}¥${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`
}

/** The one zone every time is shown in, as the reports and /verify print it. */
export const SITE_TIME_ZONE = 'Asia/Shanghai'
export const SITE_TIME_ZONE_LABEL = '北京时间'

const SITE_CLOCK = new Intl.DateTimeFormat('en-CA', {
  timeZone: SITE_TIME_ZONE,
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
})

/** `2026-11-24 07:58` in Beijing time, whatever the browser's own zone. */
export function formatDateTime(ms: number): string {
  const part = (type: string) => SITE_CLOCK.formatToParts(new Date(ms)).find((p) => p.type === type)?.value ?? ''
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}`
}
