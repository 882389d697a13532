import { Button, Space } from 'antd'
import { usePurchase } from './usePurchase'
import { formatFen } from '../../utils/format'
import type { Submission } from './types'

/** 扫码支付 for one task whose price the balance does not cover: the shortfall is paid by WeChat Pay or Alipay into
 * the balance, then `onPaid` submits the task from it. `submit` (the same submission, at `priceFen`) rides on the
 * order, so the server starts the task itself should this page be closed before the payment arrives. Says why when
 * online payment is off. */
export default function ScanToPay({
  taskId,
  shortFen,
  onPaid,
  submit,
  priceFen,
}: {
  taskId: number
  shortFen: number
  onPaid: () => void
  submit?: Submission
  priceFen?: number
}) {
  const { options, notice, picker, dialog, placing, place, channel } = usePurchase(onPaid)
  if (options.isLoading || shortFen <= 0) return null
  if (!channel) return <div className="mt">{notice}</div>
  return (
    <div className="mt" data-testid="scan-to-pay">
      {notice}
      <div className="muted">余额还差 {formatFen(shortFen)}，可扫码补足后立即提交：</div>
      <Space className="mt" wrap>
        {picker}
        <Button type="primary" loading={placing} onClick={() => void place({ kind: 'task', taskId, amountFen: shortFen, submitAfterPaid: submit && priceFen !== undefined ? { ...submit, priceFen } : undefined })} data-testid="scan-to-pay-button">
          扫码支付 {formatFen(shortFen)}
        </Button>
      </Space>
      {dialog}
    </div>
  )
}

/** 扫码充值 for a payment that has no task yet (a 对话改写 message): the shortfall — at least the smallest top-up —
 * is paid into the balance, then `onPaid` goes on. */
export function ScanTopUp({ shortFen, onPaid }: { shortFen: number; onPaid: () => void }) {
  const { options, notice, picker, dialog, placing, place, channel } = usePurchase(onPaid)
  if (options.isLoading || shortFen <= 0) return null
  if (!channel) return <div className="mt">{notice}</div>
  const amountFen = Math.max(shortFen, options.data?.topUpMinFen ?? shortFen)
  return (
    <div className="mt" data-testid="scan-top-up">
      {notice}
      <div className="muted">
        余额还差 {formatFen(shortFen)}
        {amountFen > shortFen ? `，最少充值 ${formatFen(amountFen)}（多出部分留在余额中）` : ''}，扫码充值后立即发送：
      </div>
      <Space className="mt" wrap>
        {picker}
        <Button type="primary" loading={placing} onClick={() => void place({ kind: 'top_up', amountFen })} data-testid="scan-top-up-button">
          扫码充值 {formatFen(amountFen)}
        </Button>
      </Space>
      {dialog}
    </div>
  )
}
