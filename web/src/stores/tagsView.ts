import { create } from 'zustand'

export interface VisitedView {
  path: string
  /** Path plus query, to return to exactly what was open. */
  fullPath: string
  title: string
  affix: boolean
  noCache: boolean
}

interface TagsViewState {
  visitedViews: VisitedView[]
  /** Paths whose page is kept alive while another tab is shown. */
  cachedViews: string[]
  addView: (view: VisitedView) => void
  delView: (path: string) => void
  delOthersViews: (path: string) => void
  delAllViews: () => void
  delCachedView: (path: string) => void
  reset: () => void
}

export const useTagsViewStore = create<TagsViewState>((set) => ({
  visitedViews: [],
  cachedViews: [],
  addView: (view) =>
    set((s) => {
      const title = view.title || 'no-name'
      const exists = s.visitedViews.some((v) => v.path === view.path)
      const visitedViews = exists
        ? s.visitedViews.map((v) => (v.path === view.path ? { ...v, fullPath: view.fullPath } : v))
        : [...s.visitedViews, { ...view, title }]
      const cachedViews =
        view.noCache || s.cachedViews.includes(view.path) ? s.cachedViews : [...s.cachedViews, view.path]
      return { visitedViews, cachedViews }
    }),
  delView: (path) =>
    set((s) => ({
      visitedViews: s.visitedViews.filter((v) => v.path !== path),
      cachedViews: s.cachedViews.filter((p) => p !== path),
    })),
  delOthersViews: (path) =>
    set((s) => ({
      visitedViews: s.visitedViews.filter((v) => v.affix || v.path === path),
      cachedViews: s.cachedViews.filter((p) => p === path),
    })),
  delAllViews: () =>
    set((s) => ({
      visitedViews: s.visitedViews.filter((v) => v.affix),
      cachedViews: [],
    })),
  delCachedView: (path) => set((s) => ({ cachedViews: s.cachedViews.filter((p) => p !== path) })),
  reset: () => set({ visitedViews: [], cachedViews: [] }),
}))
