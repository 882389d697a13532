import Fuse from 'fuse.js'
import type { MenuGroup } from '../router/meta'

export interface SearchEntry {
  path: string
  /** The page's own title, e.g. 查重记录. */
  title: string
  /** What the option shows, e.g. 论文查重 > 查重记录. */
  label: string
}

/** Fuzzy page search over titles (weight 0.7) and paths (weight 0.3), threshold 0.4 (spec §9). */
export function buildSearch(entries: { path: string; title: string }[]) {
  return new Fuse(entries, {
    shouldSort: true,
    threshold: 0.4,
    minMatchCharLength: 1,
    keys: [
      { name: 'title', weight: 0.7 },
      { name: 'path', weight: 0.3 },
    ],
  })
}

/**
 * Every page a user can open by address: menu pages and the hidden ones without parameters
 * (查重记录 is reached from the check page, not the sidebar), plus the service overview.
 */
export function searchEntries(groups: MenuGroup[]): SearchEntry[] {
  const pages = groups.flatMap((g) =>
    g.pages
      .filter((p) => p.meta.title && !p.path.includes(':'))
      .map((p) => ({ path: p.path, title: p.meta.title ?? '', label: `${g.title} > ${p.meta.title}` })),
  )
  return [{ path: '/dashboard', title: '首页', label: '首页 > 全部服务' }, ...pages]
}

/**
 * Pages for a query, best first. Case-insensitive substring matches come first — the page title
 * (equal, then starting with, then containing the query), then the menu group, then the path —
 * followed by fuzzy matches for typos.
 */
export function searchPages(entries: SearchEntry[], query: string, fuse = buildSearch(entries)): SearchEntry[] {
  const q = query.trim().toLowerCase()
  if (!q) return []
  const rank = (e: SearchEntry): number => {
    const title = e.title.toLowerCase()
    if (title === q) return 0
    if (title.startsWith(q)) return 1
    if (title.includes(q)) return 2
    if (e.label.toLowerCase().includes(q) || e.label.replace(' > ', '').toLowerCase().includes(q)) return 3
    if (e.path.toLowerCase().includes(q)) return 4
    return -1
  }
  const exact = entries
    .map((entry, index) => ({ entry, index, rank: rank(entry) }))
    .filter((m) => m.rank >= 0)
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map((m) => m.entry)
  const seen = new Set(exact.map((e) => e.path))
  const fuzzy = fuse
    .search(q)
    .map((r) => r.item as SearchEntry)
    .filter((e) => !seen.has(e.path))
  return [...exact, ...fuzzy]
}
