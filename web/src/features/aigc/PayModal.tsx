import { Alert, Button, Descriptions, Modal, Spin } from 'antd'
import { useQuery } from '@tanstack/react-query'
import { useNavigate } from 'react-router'
import { aigcOrder, aigcReload, aigcSubmit, aigcSubmission } from './api'
import { formatFen } from '../../utils/format'
import { PackageNotice, confirmedPayment, payAsShown, paysWithText } from '../order/paysWith'
import ScanToPay from '../order/ScanToPay'
import { useSubmit } from '../../utils/useSubmit'

/** Confirms the price of a detection (a first run, or `rerun` of an ended one) and pays from the balance. */
export default function PayModal({ id, rerun = false, onClose, onPaid }: { id: number | null; rerun?: boolean; onClose: () => void; onPaid: () => void }) {
  const navigate = useNavigate()
  const order = useQuery({ queryKey: ['aigc-order', id], queryFn: () => aigcOrder(id ?? 0), enabled: id !== null, staleTime: 0 })
  const [paying, pay] = useSubmit(async () => {
    const shown = order.data?.cost
    if (id === null || !shown) return
    const headers = confirmedPayment(shown)
    await payAsShown(() => (rerun ? aigcReload(id, headers) : aigcSubmit(id, headers)), () => order.refetch())
    onPaid()
  })
  const c = order.data?.cost
  return (
    <Modal
      open={id !== null}
      title={rerun ? '重新检测' : '确认支付'}
      onCancel={onClose}
      destroyOnHidden
      footer={[
        <Button key="cancel" onClick={onClose}>取消</Button>,
        <Button key="pay" type="primary" loading={paying} disabled={!c || c.paysWith === 'insufficient'} onClick={() => void pay(undefined)} data-testid="aigc-pay">
          {rerun ? '支付并重新检测' : '确认支付并检测'}
        </Button>,
      ]}
    >
      {order.isLoading || !c ? (
        order.error ? <Alert type="error" showIcon title={order.error.message} /> : <Spin />
      ) : (
        <>
          <Descriptions column={1} bordered size="small">
            <Descriptions.Item label="检测字数">{c.chars.toLocaleString('zh-CN')} 字</Descriptions.Item>
            <Descriptions.Item label="价格">
              <span data-testid="aigc-price">{formatFen(c.priceFen)}</span>（每千字 {formatFen(c.pricePerThousandFen)}，不足千字按千字计）
            </Descriptions.Item>
            <Descriptions.Item label="支付方式">
              <span data-testid="pays-with">{paysWithText(c)}</span>
            </Descriptions.Item>
            <Descriptions.Item label="账户余额">{formatFen(c.balanceFen)}</Descriptions.Item>
          </Descriptions>
          <div className="muted">{c.rule}</div>
          <PackageNotice cost={c} />
          {rerun && <div className="muted">重新检测使用当前的模型与校准，按一次新的检测计费；原结果将被新结果替换。</div>}
          {c.paysWith === 'insufficient' && (
            <Alert className="mt" type="warning" showIcon title="余额不足，无法提交" action={<Button size="small" onClick={() => navigate('/order/recharge')}>去充值</Button>} />
          )}
          {c.paysWith === 'insufficient' && id !== null && (
            <ScanToPay taskId={id} shortFen={c.priceFen - c.balanceFen} onPaid={() => void pay(undefined)} submit={rerun ? undefined : aigcSubmission(id)} priceFen={c.priceFen} />
          )}
        </>
      )}
    </Modal>
  )
}
