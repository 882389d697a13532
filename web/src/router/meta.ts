import type { ReactNode } from 'react'

/** Typed route meta, carried in each route's `handle`. */
export interface RouteMeta {
  title?: string
  icon?: ReactNode
  /** Roles that may open the route; absent means everyone. */
  roles?: string[]
  /** Not kept alive when its tab is left. */
  noCache?: boolean
  /** Tab that cannot be closed. */
  affix?: boolean
  /** Show in breadcrumbs (default true). */
  breadcrumb?: boolean
  /** Menu entry to highlight instead of this path (detail pages). */
  activeMenu?: string
  /** Not in the sidebar or search. */
  hidden?: boolean
  /** Not added as a tab (login, redirect, error pages). */
  noTag?: boolean
}

export interface PageRoute {
  path: string
  meta: RouteMeta
  element: ReactNode
}

export interface MenuGroup {
  key: string
  title: string
  icon: ReactNode
  roles?: string[]
  /** Only operators see it (the console); the server checks the role on every call. */
  operatorOnly?: boolean
  pages: PageRoute[]
}
