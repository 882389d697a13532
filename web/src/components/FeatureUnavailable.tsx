import { Button, Result } from 'antd'
import { useNavigate } from 'react-router'

/** The honest empty state of a screen whose feature is not built yet: no invented data. */
export default function FeatureUnavailable({ feature, detail }: { feature: string; detail: string }) {
  const navigate = useNavigate()
  return (
    <div className="page-card">
      <Result
        status="info"
        title={`「${feature}」功能尚未开放`}
        subTitle={
          <>
            <div>{detail}</div>
            <div className="muted">该功能正在建设中，开放后即可在此使用；在此之前本页不会展示任何数据。</div>
          </>
        }
        extra={
          <Button type="primary" onClick={() => navigate('/order/account')}>
            查看我的账户
          </Button>
        }
      />
    </div>
  )
}
