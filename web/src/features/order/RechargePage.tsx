import { Button, Card, Col, InputNumber, Row, Skeleton } from 'antd'
import { useState } from 'react'
import { usePurchase } from './usePurchase'
import { formatFen } from '../../utils/format'

/** /order/recharge: top-up amounts with their bonuses (充100送20) or an amount of one's own. */
export default function RechargePage() {
  const purchase = usePurchase()
  const options = purchase.options.data
  const [fen, setFen] = useState<number | null>(null)
  const tiers = options?.topUpTiers ?? []
  const chosen = fen ?? tiers[0]?.fen ?? null
  const tier = tiers.find((t) => t.fen === chosen)
  const inRange = chosen !== null && options !== undefined && (tier !== undefined || (chosen >= options.topUpMinFen && chosen <= options.topUpMaxFen))
  return (
    <div className="page">
      <h2>账户充值</h2>
      {purchase.notice}
      {!options ? (
        <Skeleton active />
      ) : (
        <>
          <Row gutter={[16, 16]}>
            {tiers.map((t) => (
              <Col key={t.fen} xs={12} sm={8} lg={6}>
                <Card hoverable className={t.fen === chosen ? 'tier tier-chosen' : 'tier'} onClick={() => setFen(t.fen)} data-testid="top-up-tier">
                  <div className="package-price">{formatFen(t.fen)}</div>
                  <div className="muted">{t.bonusFen > 0 ? `送 ${formatFen(t.bonusFen)}，到账 ${formatFen(t.fen + t.bonusFen)}` : '无赠送'}</div>
                </Card>
              </Col>
            ))}
          </Row>
          <div className="mt">
            其他金额（元）：
            <InputNumber
              min={options.topUpMinFen / 100}
              max={options.topUpMaxFen / 100}
              precision={2}
              value={chosen !== null && !tier ? chosen / 100 : null}
              placeholder={`${options.topUpMinFen / 100}–${options.topUpMaxFen / 100}`}
              onChange={(v) => setFen(v === null ? null : Math.round(Number(v) * 100))}
              data-testid="top-up-custom"
            />
            <span className="muted"> 自定义金额不参加赠送</span>
          </div>
          {purchase.picker && <div className="mt">支付方式：{purchase.picker}</div>}
          <div className="mt">
            应付 <strong>{chosen !== null ? formatFen(chosen) : '—'}</strong>
            {chosen !== null && <span>，到账 {formatFen(chosen + (tier?.bonusFen ?? 0))}</span>}
          </div>
          <Button
            className="mt"
            type="primary"
            disabled={!purchase.channel || !inRange}
            loading={purchase.placing}
            onClick={() => chosen !== null && void purchase.place({ kind: 'top_up', amountFen: chosen })}
            data-testid="top-up-pay"
          >
            立即充值
          </Button>
        </>
      )}
      {purchase.dialog}
    </div>
  )
}
