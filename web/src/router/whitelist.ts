/** Paths reachable without a token (spec §2), plus the pages a visitor needs to regain access. */
export const whiteList = [
  '/checkvip',
  '/login',
  '/papercheck/check',
  '/papergc/gc',
  '/papermachinesubmit/papermachine',
  '/cnki/cnki',
  '/aigcdown/machine',
  '/auth-redirect',
  '/dashboard',
  '/paper/check',
  '/paper/report',
  '/paperwirte/gc',
  '/paperwirte/report',
  '/papermachine/papermachine',
  '/papermachine/list',
  '/machine/machine',
  '/machine/list',
  // Not in the spec's list: the forgot-password help and the phone QR confirmation page.
  '/forgot-password',
]

export function isWhitelisted(path: string): boolean {
  return whiteList.includes(path) || path.startsWith('/m/qr/')
}

/** Pages outside the guarded shell: anyone may open them. */
const standalone = (path: string) => path === '/verify' || path.startsWith('/m/qr/')

/**
 * Whether a visitor without a token must log in before `path` (a pathname) opens: everything the
 * guard does not let through. `/` only redirects to the (whitelisted) check page, and the
 * refresh helper /redirect/… is judged by the page it refreshes.
 */
export function needsLogin(path: string): boolean {
  if (path === '/' || standalone(path)) return false
  if (path.startsWith('/redirect/')) return needsLogin(path.slice('/redirect'.length))
  return !isWhitelisted(path)
}
