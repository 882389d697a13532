import { useEffect } from 'react'
import { useNavigate } from 'react-router'

/** Landing page for third-party sign-in callbacks; hands over to the app's home. */
export default function AuthRedirectPage() {
  const navigate = useNavigate()
  useEffect(() => {
    navigate('/', { replace: true })
  }, [navigate])
  return null
}
