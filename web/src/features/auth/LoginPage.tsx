import { Card } from 'antd'
import { useNavigate, useSearchParams } from 'react-router'
import LoginPanel from './LoginPanel'
import { loginReason, safeRedirect } from '../../router/access'

/** /login: the same panel as the dialog, saying which page asked; afterwards, back to where the user was going. */
export default function LoginPage() {
  const [params] = useSearchParams()
  const navigate = useNavigate()
  const target = safeRedirect(params.get('redirect'))
  const reason = target && target !== '/' ? loginReason(target) : undefined
  return (
    <div className="page-card login-page">
      <Card title="登录文鉴">
        <LoginPanel active reason={reason} onSuccess={() => navigate(target ?? '/', { replace: true })} />
      </Card>
    </div>
  )
}
