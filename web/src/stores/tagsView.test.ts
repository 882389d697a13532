import { beforeEach, describe, expect, it } from 'vitest'
import { useTagsViewStore, type VisitedView } from './tagsView'

const view = (path: string, extra: Partial<VisitedView> = {}): VisitedView => ({
  path,
  fullPath: path,
  title: path.slice(1),
  affix: false,
  noCache: false,
  ...extra,
})

describe('tags view store', () => {
  beforeEach(() => useTagsViewStore.getState().reset())

  it('adds a view once per path and caches it unless no-cache', () => {
    const s = useTagsViewStore.getState()
    s.addView(view('/a'))
    s.addView(view('/a', { fullPath: '/a?x=1' }))
    s.addView(view('/b', { noCache: true }))
    const { visitedViews, cachedViews } = useTagsViewStore.getState()
    expect(visitedViews.map((v) => v.path)).toEqual(['/a', '/b'])
    expect(visitedViews[0].fullPath).toBe('/a?x=1')
    expect(cachedViews).toEqual(['/a'])
  })

  it("names untitled views 'no-name'", () => {
    useTagsViewStore.getState().addView(view('/x', { title: '' }))
    expect(useTagsViewStore.getState().visitedViews[0].title).toBe('no-name')
  })

  it('close others keeps affix views and the chosen one', () => {
    const s = useTagsViewStore.getState()
    s.addView(view('/home', { affix: true }))
    s.addView(view('/a'))
    s.addView(view('/b'))
    s.delOthersViews('/b')
    expect(useTagsViewStore.getState().visitedViews.map((v) => v.path)).toEqual(['/home', '/b'])
    expect(useTagsViewStore.getState().cachedViews).toEqual(['/b'])
  })

  it('close all keeps only affix views', () => {
    const s = useTagsViewStore.getState()
    s.addView(view('/home', { affix: true }))
    s.addView(view('/a'))
    s.delAllViews()
    expect(useTagsViewStore.getState().visitedViews.map((v) => v.path)).toEqual(['/home'])
    expect(useTagsViewStore.getState().cachedViews).toEqual([])
  })
})
