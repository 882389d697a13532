import type { MenuGroup, PageRoute } from './meta'

function hasPermission(roles: string[], routeRoles?: string[]): boolean {
  return !routeRoles || routeRoles.some((r) => roles.includes(r))
}

/** admin sees every route; others only routes without roles or with one of theirs (spec §6). */
export function filterGroups(groups: MenuGroup[], roles: string[]): MenuGroup[] {
  if (roles.includes('admin')) return groups
  return groups
    .filter((g) => hasPermission(roles, g.roles))
    .map((g) => ({ ...g, pages: g.pages.filter((p: PageRoute) => hasPermission(roles, p.meta.roles)) }))
}
