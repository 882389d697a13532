import { Activity, Suspense, useRef, type ReactNode } from 'react'
import { Spin } from 'antd'
import { useLocation, useOutlet } from 'react-router'
import { useTagsViewStore } from '../stores/tagsView'

/**
 * Renders the current page and keeps cached tabs alive (hidden with <Activity>), so a form
 * half filled in on one tab is still there when the user comes back.
 */
export default function AppMain() {
  const outlet = useOutlet()
  const { pathname } = useLocation()
  const cachedViews = useTagsViewStore((s) => s.cachedViews)
  const pages = useRef(new Map<string, ReactNode>())

  const map = pages.current
  if (outlet) map.set(pathname, outlet)
  for (const path of [...map.keys()]) {
    if (path !== pathname && !cachedViews.includes(path)) map.delete(path)
  }

  return (
    <main className="app-main">
      {[...map.entries()].map(([path, element]) => (
        <Activity key={path} mode={path === pathname ? 'visible' : 'hidden'}>
          {/* Pages are split into chunks: a spinner shows while one loads for the first time. */}
          <Suspense fallback={<Spin className="page-spin" />}>{element}</Suspense>
        </Activity>
      ))}
    </main>
  )
}
