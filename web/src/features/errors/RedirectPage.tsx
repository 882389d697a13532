import { useEffect } from 'react'
import { useNavigate, useParams, useLocation } from 'react-router'

/** /redirect/<path>: remounts a page (the tags view's "refresh"). */
export default function RedirectPage() {
  const params = useParams()
  const location = useLocation()
  const navigate = useNavigate()
  useEffect(() => {
    navigate(`/${params['*'] ?? ''}${location.search}`, { replace: true })
  }, [navigate, params, location.search])
  return null
}
