import type { MenuGroup, PageRoute } from './meta'

function hasPermission(roles: string[], routeRoles?: string[]): boolean {
  return !routeRoles || routeRoles.some((r) => roles.includes(r))
}

/**
 * admin sees every route; others only routes without roles or with one of theirs (spec §6).
 * The operator console's groups are for operators only, whatever the route roles say.
 */
export function filterGroups(groups: MenuGroup[], roles: string[], operator = false): MenuGroup[] {
  const visible = groups.filter((g) => operator || !g.operatorOnly)
  if (roles.includes('admin')) return visible
  return visible
    .filter((g) => hasPermission(roles, g.roles))
    .map((g) => ({ ...g, pages: g.pages.filter((p: PageRoute) => hasPermission(roles, p.meta.roles)) }))
}
