import { useEffect } from 'react'
import { Dropdown } from 'antd'
import { CloseOutlined } from '@ant-design/icons'
import { useLocation, useMatches, useNavigate } from 'react-router'
import { useTagsViewStore, type VisitedView } from '../stores/tagsView'
import { allPages } from '../router/routes'
import type { RouteMeta } from '../router/meta'
import { zhCN } from '../locales/zh-CN'

/** Tabs of visited views, with Refresh / Close / Close Others / Close All on right click. */
export default function TagsView() {
  const { visitedViews, addView, delView, delOthersViews, delAllViews, delCachedView } = useTagsViewStore()
  const location = useLocation()
  const matches = useMatches()
  const navigate = useNavigate()
  const meta = matches[matches.length - 1]?.handle as RouteMeta | undefined

  useEffect(() => {
    for (const page of allPages.filter((p) => p.meta.affix)) {
      addView({ path: page.path, fullPath: page.path, title: page.meta.title ?? '', affix: true, noCache: Boolean(page.meta.noCache) })
    }
  }, [addView])

  useEffect(() => {
    if (!meta || meta.noTag || !meta.title) return
    addView({
      path: location.pathname,
      fullPath: location.pathname + location.search,
      title: meta.title,
      affix: Boolean(meta.affix),
      noCache: Boolean(meta.noCache),
    })
  }, [location.pathname, location.search, meta, addView])

  const toLast = (views: VisitedView[]) => {
    const last = views[views.length - 1]
    navigate(last ? last.fullPath : '/')
  }

  const close = (view: VisitedView) => {
    if (view.affix) return
    delView(view.path)
    if (view.path === location.pathname) toLast(useTagsViewStore.getState().visitedViews)
  }

  const onMenu = (key: string, view: VisitedView) => {
    if (key === 'refresh') {
      delCachedView(view.path)
      navigate(`/redirect${view.fullPath}`, { replace: true })
    } else if (key === 'close') {
      close(view)
    } else if (key === 'closeOthers') {
      delOthersViews(view.path)
      if (view.path !== location.pathname) navigate(view.fullPath)
    } else if (key === 'closeAll') {
      delAllViews()
      const rest = useTagsViewStore.getState().visitedViews
      if (!rest.some((v) => v.path === location.pathname)) toLast(rest)
    }
  }

  return (
    <div className="tags-view" data-testid="tags-view">
      {visitedViews.map((view) => {
        const active = view.path === location.pathname
        return (
          <Dropdown
            key={view.path}
            trigger={['contextMenu']}
            menu={{
              style: { width: 105 },
              items: [
                { key: 'refresh', label: zhCN.tags.refresh },
                ...(view.affix ? [] : [{ key: 'close', label: zhCN.tags.close }]),
                { key: 'closeOthers', label: zhCN.tags.closeOthers },
                { key: 'closeAll', label: zhCN.tags.closeAll },
              ],
              onClick: ({ key }) => onMenu(key, view),
            }}
          >
            <span
              className={`tags-view-item${active ? ' active' : ''}`}
              data-path={view.path}
              onClick={() => navigate(view.fullPath)}
            >
              {view.title}
              {!view.affix && (
                <CloseOutlined
                  className="tags-view-close"
                  aria-label={`关闭 ${view.title}`}
                  onClick={(e) => {
                    e.stopPropagation()
                    close(view)
                  }}
                />
              )}
            </span>
          </Dropdown>
        )
      })}
    </div>
  )
}
