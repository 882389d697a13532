import { Button, Result } from 'antd'
import { useNavigate } from 'react-router'

export function NotFoundPage() {
  const navigate = useNavigate()
  return (
    <div className="page-card">
      <Result
        status="404"
        title="404"
        subTitle="抱歉，您访问的页面不存在。"
        extra={<Button type="primary" onClick={() => navigate('/')}>返回首页</Button>}
      />
    </div>
  )
}

export function UnauthorizedPage() {
  const navigate = useNavigate()
  return (
    <div className="page-card">
      <Result
        status="403"
        title="401"
        subTitle="抱歉，您没有访问该页面的权限。"
        extra={<Button type="primary" onClick={() => navigate('/')}>返回首页</Button>}
      />
    </div>
  )
}
