import { Button, Card, Col, Empty, Row, Skeleton, Tag } from 'antd'
import { useQuery } from '@tanstack/react-query'
import { packageList } from './api'
import { usePurchase } from './usePurchase'
import { formatFen } from '../../utils/format'

/** /order/taocan: the packages on sale, bought by scanning a WeChat Pay or Alipay code. */
export default function PackagesPage() {
  const packages = useQuery({ queryKey: ['packages'], queryFn: packageList })
  const purchase = usePurchase()
  return (
    <div className="page">
      <h2>优惠套餐</h2>
      <div className="muted mb">购买后次数记入账户中心，提交查重、AIGC检测、降重等任务时优先使用套餐次数（确认支付时会写明由套餐抵扣），到期未用完的次数自动失效。</div>
      {purchase.notice}
      {purchase.picker && <div className="mb">支付方式：{purchase.picker}</div>}
      {packages.isLoading ? (
        <Skeleton active />
      ) : !packages.data?.length ? (
        <Empty description="暂无在售套餐" />
      ) : (
        <Row gutter={[16, 16]}>
          {packages.data.map((p) => (
            <Col key={p.id} xs={24} sm={12} lg={8}>
              <Card title={p.name} extra={<Tag>{p.validDays} 天有效</Tag>} data-testid="package-card">
                <div className="package-price">{formatFen(p.priceFen)}</div>
                <div>{p.grantLabel}</div>
                <div className="muted">{p.description}</div>
                <Button
                  className="mt"
                  type="primary"
                  block
                  disabled={!purchase.channel}
                  loading={purchase.placing}
                  onClick={() => void purchase.place({ kind: 'package', productId: p.id })}
                  data-testid="package-buy"
                >
                  立即购买
                </Button>
              </Card>
            </Col>
          ))}
        </Row>
      )}
      {purchase.dialog}
    </div>
  )
}
