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

export function formatDateTime(ms: number): string {
  const d = new Date(ms)
  const p = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`
}
