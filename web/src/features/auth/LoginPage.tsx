import { Card } from 'antd'
import { useNavigate, useSearchParams } from 'react-router'
import LoginPanel from './LoginPanel'

/** /login: the same panel as the dialog; afterwards, back to where the user was going. */
export default function LoginPage() {
  const [params] = useSearchParams()
  const navigate = useNavigate()
  const target = params.get('redirect')
  const safeTarget = target && target.startsWith('/') && !target.startsWith('//') ? target : '/'
  return (
    <div className="page-card login-page">
      <Card title="登录文鉴">
        <LoginPanel active onSuccess={() => navigate(safeTarget, { replace: true })} />
      </Card>
    </div>
  )
}
