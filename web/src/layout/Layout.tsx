import { useEffect } from 'react'
import { Drawer } from 'antd'
import { useLocation, useMatches, useNavigation } from 'react-router'
import NProgress from 'nprogress'
import 'nprogress/nprogress.css'
import Sidebar from './Sidebar'
import Navbar from './Navbar'
import Breadcrumbs from './Breadcrumbs'
import TagsView from './TagsView'
import AppMain from './AppMain'
import SettingsPanel from '../components/SettingsPanel'
import LoginDialog from '../features/auth/LoginDialog'
import { MOBILE_BREAKPOINT, useAppStore } from '../stores/app'
import { useSettingsStore } from '../stores/settings'
import { useSiteStore } from '../stores/site'
import { useLoginDialogStore } from '../stores/loginDialog'
import { useUserStore } from '../stores/user'
import { setNotLoggedInHandler } from '../api/client'
import { getToken } from '../utils/auth'
import type { RouteMeta } from '../router/meta'

NProgress.configure({ showSpinner: false })

/** Spec §2: the site title, plus '- ' and the route title when there is one. */
export function pageTitle(siteTitle: string, routeTitle?: string): string {
  return routeTitle ? `${siteTitle} - ${routeTitle}` : siteTitle
}

function useResponsiveDevice() {
  const { setDevice, closeSidebar } = useAppStore()
  useEffect(() => {
    const onResize = () => {
      const mobile = window.innerWidth < MOBILE_BREAKPOINT
      setDevice(mobile ? 'mobile' : 'desktop')
      if (mobile) closeSidebar(true)
    }
    onResize()
    window.addEventListener('resize', onResize)
    return () => window.removeEventListener('resize', onResize)
  }, [setDevice, closeSidebar])
}

export default function Layout() {
  const { sidebarOpened, device, toggleSidebar, closeSidebar } = useAppStore()
  const { tagsView, fixedHeader } = useSettingsStore()
  const siteTitle = useSiteStore((s) => s.siteTitle)
  const navigation = useNavigation()
  const matches = useMatches()
  const location = useLocation()
  const meta = (matches[matches.length - 1]?.handle ?? {}) as RouteMeta
  useResponsiveDevice()

  useEffect(() => {
    if (navigation.state === 'idle') NProgress.done()
    else NProgress.start()
  }, [navigation.state])

  useEffect(() => {
    document.title = pageTitle(siteTitle, meta.title)
  }, [siteTitle, meta.title])

  useEffect(() => {
    setNotLoggedInHandler(() => {
      useUserStore.getState().resetToken()
      useLoginDialogStore.getState().open()
    })
    // Spec §2: the login dialog appears on load when there is no token.
    if (!getToken() && location.pathname !== '/login') useLoginDialogStore.getState().open()
    // Only on first load.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [])

  const mobile = device === 'mobile'
  const collapsed = !mobile && !sidebarOpened

  return (
    <div className={`app-wrapper ${mobile ? 'mobile' : 'desktop'}${collapsed ? ' collapsed' : ''}`}>
      {mobile ? (
        <Drawer
          placement="left"
          open={sidebarOpened}
          onClose={() => closeSidebar(false)}
          size={220}
          closable={false}
          styles={{ body: { padding: 0, background: '#001529' } }}
        >
          <Sidebar collapsed={false} onNavigate={() => closeSidebar(false)} />
        </Drawer>
      ) : (
        <aside className="sidebar-container">
          <Sidebar collapsed={collapsed} />
        </aside>
      )}
      <div className="main-container">
        <header className={`main-header${fixedHeader ? ' fixed' : ''}`}>
          <Navbar />
          <div className="subbar">
            {mobile && (
              <span className="subbar-menu" onClick={toggleSidebar} role="button">
                菜单
              </span>
            )}
            <Breadcrumbs />
          </div>
          {tagsView && <TagsView />}
        </header>
        <AppMain />
      </div>
      <SettingsPanel />
      <LoginDialog />
    </div>
  )
}
