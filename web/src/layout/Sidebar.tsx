import { useEffect, useState } from 'react'
import { Menu } from 'antd'
import type { MenuProps } from 'antd'
import { useLocation, useNavigate, useMatches } from 'react-router'
import { usePermissionStore } from '../stores/permission'
import { useSettingsStore } from '../stores/settings'
import { useSiteStore } from '../stores/site'
import type { RouteMeta } from '../router/meta'

export default function Sidebar({ collapsed, onNavigate }: { collapsed: boolean; onNavigate?: () => void }) {
  const groups = usePermissionStore((s) => s.groups)
  const showLogo = useSettingsStore((s) => s.sidebarLogo)
  const siteTitle = useSiteStore((s) => s.siteTitle)
  const { pathname } = useLocation()
  const navigate = useNavigate()
  const matches = useMatches()
  const meta = (matches[matches.length - 1]?.handle ?? {}) as RouteMeta
  const selected = meta.activeMenu ?? pathname
  const openGroup = groups.find((g) => g.pages.some((p) => p.path === selected))?.key
  const [openKeys, setOpenKeys] = useState<string[]>(openGroup ? [openGroup] : [])
  // Opening a page from elsewhere (header, tabs, search) unfolds its group.
  useEffect(() => {
    if (openGroup) setOpenKeys((keys) => (keys.includes(openGroup) ? keys : [...keys, openGroup]))
  }, [openGroup])

  const items: MenuProps['items'] = groups.map((g) => ({
    key: g.key,
    icon: g.icon,
    label: g.title,
    children: g.pages.filter((p) => !p.meta.hidden).map((p) => ({ key: p.path, label: p.meta.title })),
  }))

  return (
    <div className="sidebar">
      {showLogo && (
        <div className="sidebar-logo" onClick={() => navigate('/')}>
          <img src="/favicon.svg" alt="" width={28} height={28} />
          {!collapsed && <span>{siteTitle}</span>}
        </div>
      )}
      <Menu
        mode="inline"
        theme="dark"
        inlineCollapsed={collapsed}
        selectedKeys={[selected]}
        {...(collapsed ? {} : { openKeys, onOpenChange: setOpenKeys })}
        items={items}
        onClick={({ key }) => {
          navigate(key)
          onNavigate?.()
        }}
      />
    </div>
  )
}
