import { lazy, Suspense, useEffect, useState } from 'react'
import { useLocation, useMatches, useNavigation } from 'react-router'
import NProgress from 'nprogress'
import 'nprogress/nprogress.css'
import Sidebar from './Sidebar'
import Navbar from './Navbar'
import Breadcrumbs from './Breadcrumbs'
import TagsView from './TagsView'
import AppMain from './AppMain'
import NoticeBar from '../components/NoticeBar'
import LoginDialog from '../features/auth/LoginDialog'
import { useLoginBlocker } from '../features/auth/useLoginBlocker'
import { MOBILE_BREAKPOINT, useAppStore } from '../stores/app'
import { useSettingsStore } from '../stores/settings'
import { useSiteStore } from '../stores/site'
import { useLoginDialogStore } from '../stores/loginDialog'
import { useUserStore } from '../stores/user'
import { setNotLoggedInHandler } from '../api/client'
import { getToken } from '../utils/auth'
import type { RouteMeta } from '../router/meta'

NProgress.configure({ showSpinner: false })

// Loaded when first opened: its colour picker is heavy and most visitors never open it.
const SettingsPanel = lazy(() => import('../components/SettingsPanel'))
// The sidebar drawer of mobile mode (below 992 px).
const MobileSidebar = lazy(() => import('./MobileSidebar'))

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
  const { tagsView, fixedHeader, panelVisible } = useSettingsStore()
  const [settingsLoaded, setSettingsLoaded] = useState(false)
  if (panelVisible && !settingsLoaded) setSettingsLoaded(true)
  const siteTitle = useSiteStore((s) => s.siteTitle)
  const navigation = useNavigation()
  const matches = useMatches()
  const location = useLocation()
  const meta = (matches[matches.length - 1]?.handle ?? {}) as RouteMeta
  useResponsiveDevice()
  useLoginBlocker()

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
        <Suspense fallback={null}>
          <MobileSidebar open={sidebarOpened} onClose={() => closeSidebar(false)} />
        </Suspense>
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
        <NoticeBar path={location.pathname} />
        <AppMain />
      </div>
      {settingsLoaded && (
        <Suspense fallback={null}>
          <SettingsPanel />
        </Suspense>
      )}
      <LoginDialog />
    </div>
  )
}
