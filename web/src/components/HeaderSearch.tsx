import { useMemo, useState } from 'react'
import { Select } from 'antd'
import { SearchOutlined } from '@ant-design/icons'
import Fuse from 'fuse.js'
import { useNavigate } from 'react-router'
import { usePermissionStore } from '../stores/permission'

interface SearchEntry {
  path: string
  title: string
}

/** Fuzzy page search over titles (weight 0.7) and paths (weight 0.3), threshold 0.4. */
export function buildSearch(entries: SearchEntry[]) {
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

export default function HeaderSearch() {
  const groups = usePermissionStore((s) => s.groups)
  const navigate = useNavigate()
  const [open, setOpen] = useState(false)
  const [query, setQuery] = useState('')
  const entries = useMemo(
    () =>
      groups.flatMap((g) =>
        g.pages
          .filter((p) => !p.meta.hidden)
          .map((p) => ({ path: p.path, title: `${g.title} > ${p.meta.title}` })),
      ),
    [groups],
  )
  const fuse = useMemo(() => buildSearch(entries), [entries])
  const options = query ? fuse.search(query).map((r) => ({ value: r.item.path, label: r.item.title })) : []

  return (
    <div className={`header-search${open ? ' show' : ''}`}>
      <SearchOutlined className="navbar-icon" onClick={() => setOpen(!open)} aria-label="搜索页面" />
      {open && (
        <Select
          autoFocus
          showSearch={{ filterOption: false, onSearch: setQuery }}
          placeholder="搜索页面"
          className="header-search-select"
          options={options}
          notFoundContent={query ? '没有找到相关页面' : null}
          onChange={(path: string) => {
            navigate(path)
            setOpen(false)
            setQuery('')
          }}
          onBlur={() => {
            setOpen(false)
            setQuery('')
          }}
          data-testid="header-search"
        />
      )}
    </div>
  )
}
