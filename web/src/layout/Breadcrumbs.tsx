import { Breadcrumb } from 'antd'
import { Link, useLocation, useMatches } from 'react-router'
import { findPage } from '../router/routes'
import type { RouteMeta } from '../router/meta'

export default function Breadcrumbs() {
  const { pathname } = useLocation()
  const matches = useMatches()
  const meta = (matches[matches.length - 1]?.handle ?? {}) as RouteMeta
  const { group, page } = findPage(pathname)
  const items: { title: React.ReactNode }[] = [{ title: <Link to="/dashboard">首页</Link> }]
  if (group && page) {
    const first = group.pages.find((p) => !p.meta.hidden)
    items.push({ title: first && first.path !== page.path ? <Link to={first.path}>{group.title}</Link> : group.title })
    if (page.meta.breadcrumb !== false && page.meta.title !== group.title) items.push({ title: page.meta.title })
  } else if (meta.title && pathname !== '/dashboard') {
    items.push({ title: meta.title })
  }
  return <Breadcrumb className="breadcrumbs" items={items} />
}
