import { useMemo, useState } from 'react'
import { Select } from 'antd'
import { usePermissionStore } from '../stores/permission'
import { buildSearch, searchEntries, searchPages } from './pageSearch'

/** The search box of the header (its own chunk: Select and Fuse load on the first search). */
export default function PageSearchBox({ onPick, onClose }: { onPick: (path: string) => void; onClose: () => void }) {
  const groups = usePermissionStore((s) => s.groups)
  const [query, setQuery] = useState('')
  const entries = useMemo(() => searchEntries(groups), [groups])
  const fuse = useMemo(() => buildSearch(entries), [entries])
  const options = searchPages(entries, query, fuse).map((e) => ({ value: e.path, label: e.label }))

  return (
    <Select
      autoFocus
      showSearch={{ filterOption: false, onSearch: setQuery }}
      placeholder="搜索页面"
      className="header-search-select"
      options={options}
      notFoundContent={query ? '没有找到相关页面' : null}
      onChange={(path: string) => onPick(path)}
      onBlur={onClose}
      data-testid="header-search"
    />
  )
}
