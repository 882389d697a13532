import { Button, Result } from 'antd'
import type { ResultProps } from 'antd'
import { useNavigate } from 'react-router'

function ErrorResult({ status, title, subTitle }: Pick<ResultProps, 'status' | 'title' | 'subTitle'>) {
  const navigate = useNavigate()
  return (
    <div className="page-card">
      <Result
        status={status}
        title={title}
        subTitle={subTitle}
        extra={<Button type="primary" onClick={() => navigate('/')}>返回首页</Button>}
      />
    </div>
  )
}

export const NotFoundPage = () => <ErrorResult status="404" title="404" subTitle="抱歉，您访问的页面不存在。" />

export const UnauthorizedPage = () => <ErrorResult status="403" title="401" subTitle="抱歉，您没有访问该页面的权限。" />
