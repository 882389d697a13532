import { lazy, Suspense, useState } from 'react'
import { SearchOutlined } from '@ant-design/icons'
import { useNavigate } from 'react-router'

const PageSearchBox = lazy(() => import('./PageSearchBox'))

/** Header search over page titles and paths (see `searchPages`). */
export default function HeaderSearch() {
  const navigate = useNavigate()
  const [open, setOpen] = useState(false)

  return (
    <div className={`header-search${open ? ' show' : ''}`}>
      <SearchOutlined className="navbar-icon" onClick={() => setOpen(!open)} aria-label="搜索页面" />
      {open && (
        <Suspense fallback={<span className="header-search-select" />}>
          <PageSearchBox
            onPick={(path) => {
              navigate(path)
              setOpen(false)
            }}
            onClose={() => setOpen(false)}
          />
        </Suspense>
      )}
    </div>
  )
}
