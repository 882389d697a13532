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

/** The one zone every time is shown in, as the reports and /verify print it: the site's
 * configured zone (site config), Beijing time until that has loaded. */
let siteZone = 'Asia/Shanghai'
let siteZoneLabel = '北京时间'
let siteClock = clockOf(siteZone)

function clockOf(timeZone: string) {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  })
}

/** Takes the site's zone (IANA name) and its label; a zone this browser does not know is ignored. */
export function setSiteTimeZone(zone: string, label: string) {
  try {
    siteClock = clockOf(zone)
    siteZone = zone
    siteZoneLabel = label || zone
  } catch {
    // Keep the previous zone: every time stays in one zone, named correctly.
  }
}

/** How the site's zone is named beside a time: 北京时间, or the zone's name. */
export const siteTimeZoneLabel = () => siteZoneLabel
export const siteTimeZone = () => siteZone

/** `2026-11-24 07:58` in the site's zone, whatever the browser's own zone. */
export function formatDateTime(ms: number): string {
  const part = (type: string) => siteClock.formatToParts(new Date(ms)).find((p) => p.type === type)?.value ?? ''
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}`
}
