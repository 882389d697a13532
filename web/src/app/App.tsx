import { useEffect, useSyncExternalStore } from 'react'
import { App as AntApp, ConfigProvider, theme } from 'antd'
import type { SizeType } from 'antd/es/config-provider/SizeContext'
import zhCNLocale from 'antd/locale/zh_CN'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { RouterProvider } from 'react-router'
import { router } from '../router'
import { useAppStore, type UiSize } from '../stores/app'
import { useSettingsStore } from '../stores/settings'
import { useSiteStore } from '../stores/site'
import { setMessageApi, TOAST_SECONDS, TOAST_TOP } from '../utils/feedback'

const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false } } })

/** Default / Medium / Small / Mini onto antd's three sizes; Mini also uses the compact algorithm. */
const sizeMap: Record<UiSize, SizeType> = { default: 'large', medium: 'middle', small: 'small', mini: 'small' }

function MessageBinder() {
  const { message } = AntApp.useApp()
  useEffect(() => setMessageApi(message), [message])
  return null
}

const REDUCED_MOTION = '(prefers-reduced-motion: reduce)'

/** Follows the system's "reduce motion" setting, so menus and dialogs open without animation there. */
function usePrefersReducedMotion(): boolean {
  return useSyncExternalStore(
    (onChange) => {
      const query = window.matchMedia(REDUCED_MOTION)
      query.addEventListener('change', onChange)
      return () => query.removeEventListener('change', onChange)
    },
    () => window.matchMedia(REDUCED_MOTION).matches,
  )
}

export default function App() {
  const size = useAppStore((s) => s.size)
  const primary = useSettingsStore((s) => s.theme)
  const loadSite = useSiteStore((s) => s.load)
  const reducedMotion = usePrefersReducedMotion()
  useEffect(() => {
    void loadSite()
  }, [loadSite])

  return (
    <ConfigProvider
      locale={zhCNLocale}
      componentSize={sizeMap[size]}
      button={{ autoInsertSpace: false }}
      theme={{
        token: { colorPrimary: primary, motion: !reducedMotion },
        algorithm: size === 'mini' ? [theme.defaultAlgorithm, theme.compactAlgorithm] : theme.defaultAlgorithm,
      }}
    >
      <AntApp message={{ top: TOAST_TOP, duration: TOAST_SECONDS, maxCount: 3 }}>
        <MessageBinder />
        <QueryClientProvider client={queryClient}>
          <RouterProvider router={router} />
        </QueryClientProvider>
      </AntApp>
    </ConfigProvider>
  )
}
