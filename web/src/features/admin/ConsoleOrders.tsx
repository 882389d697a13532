import { useState } from 'react'
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query'
import { Button, Card, Form, Input, InputNumber, Modal, Select, Space, Tag } from 'antd'
import OperatorGate from './OperatorGate'
import { abandonRefund, reconcileOrders, refundOrder, searchOrders, type OrderQuery } from './api'
import type { OrderRow, RefundRow } from './types'
import ResponsiveTable from '../../components/ResponsiveTable'
import { channelLabels, statusLabels, type Channel, type Order } from '../order/types'
import { formatDateTime, formatFen } from '../../utils/format'
import { toastSuccess, toastWarning } from '../../utils/feedback'

const PAGE_SIZE = 20
const STATUS_COLORS: Record<Order['status'], string> = { pending: 'blue', paid: 'green', closed: 'default', refunded: 'orange' }
const KIND_NAMES: Record<string, string> = { package: '套餐', top_up: '充值', task: '任务支付' }

/** The refund dialog: how much (yuan, at most what is left) and why; the money goes back the way it came. */
function RefundDialog({ order, onClose }: { order: OrderRow; onClose: () => void }) {
  const client = useQueryClient()
  const left = order.amountFen - order.refundedFen
  const [yuan, setYuan] = useState<number | null>(left / 100)
  const [reason, setReason] = useState('')
  const [busy, setBusy] = useState(false)
  const fen = yuan === null ? 0 : Math.round(yuan * 100)
  const wrongAmount = fen <= 0 || fen > left
  // A top-up's bonus goes back with it, in proportion (as the server computes it, rounded in the user's favour).
  const share = (refunded: number) => Math.floor((order.creditFen * refunded) / order.amountFen)
  const takenBack = order.kind === 'package' ? 0 : share(order.refundedFen + fen) - share(order.refundedFen)
  const submit = async () => {
    if (wrongAmount || !reason.trim()) return
    setBusy(true)
    try {
      const row = await refundOrder(order.id, fen, reason.trim())
      const last = row.refunds[row.refunds.length - 1]
      if (last?.status === 'pending') toastWarning(`退款已记录，${channelLabels[order.channel as Channel] ?? ''}尚未确认：${last.error ?? '处理中'}；系统每分钟会自动重试`)
      else toastSuccess(`已原路退款 ${formatFen(fen)}`)
      await client.invalidateQueries({ queryKey: ['admin', 'orders'] })
      onClose()
    } catch {
      // Toasted by the client (the balance already spent, say).
    } finally {
      setBusy(false)
    }
  }
  return (
    <Modal open title={`退款：${order.title}`} okText="确认退款" cancelText="取消" onOk={submit} confirmLoading={busy} okButtonProps={{ danger: true, disabled: wrongAmount || !reason.trim() }} onCancel={onClose}>
      <p>
        订单 {order.outTradeNo}，实付 {formatFen(order.amountFen)}
        {order.refundedFen > 0 ? `，已退 ${formatFen(order.refundedFen)}` : ''}。退款原路退回{channelLabels[order.channel as Channel] ?? ''}，同时收回这笔订单给用户的余额或套餐次数（已用掉的部分不能退）。
      </p>
      {!wrongAmount && takenBack > fen && (
        <p data-testid="refund-bonus-note">
          这笔充值含赠送：退款 {formatFen(fen)} 将从用户余额收回 {formatFen(takenBack)}（含赠送 {formatFen(takenBack - fen)}），用户流水会写明。
        </p>
      )}
      <Form layout="vertical">
        <Form.Item label="退款金额（元）" validateStatus={wrongAmount ? 'error' : undefined} help={wrongAmount ? `应在 0.01 到 ${(left / 100).toFixed(2)} 元之间` : undefined}>
          <InputNumber value={yuan} onChange={(v) => setYuan(typeof v === 'number' ? v : null)} step={0.01} precision={2} style={{ width: 160 }} data-testid="refund-amount" />
        </Form.Item>
        <Form.Item label="退款原因" required extra="用户的账户流水中会显示它">
          <Input value={reason} onChange={(e) => setReason(e.target.value)} maxLength={100} data-testid="refund-reason" />
        </Form.Item>
      </Form>
    </Modal>
  )
}

function OrdersBody() {
  const client = useQueryClient()
  const [refunding, setRefunding] = useState<OrderRow | null>(null)
  const [query, setQuery] = useState<OrderQuery>({ q: '', status: '', channel: '', page: 1, size: PAGE_SIZE })
  const [reconciling, setReconciling] = useState(false)
  const { data, error, refetch, isFetching } = useQuery({
    queryKey: ['admin', 'orders', query],
    queryFn: () => searchOrders(query),
    placeholderData: keepPreviousData,
  })
  const set = (patch: Partial<OrderQuery>) => setQuery((q) => ({ ...q, page: 1, ...patch }))
  const reconcile = async () => {
    setReconciling(true)
    try {
      const { paid, closed, refunded } = await reconcileOrders()
      const done = [paid && `${paid} 笔补记为已支付`, closed && `${closed} 笔过期关闭`, refunded && `${refunded} 笔退款已到账`].filter(Boolean)
      toastSuccess(done.length > 0 ? `对账完成：${done.join('，')}` : '对账完成：没有需要更正的订单')
      await client.invalidateQueries({ queryKey: ['admin', 'orders'] })
    } catch {
      // Toasted by the client (e.g. online payment not configured).
    } finally {
      setReconciling(false)
    }
  }
  const status = (o: OrderRow) => <Tag color={STATUS_COLORS[o.status]}>{statusLabels[o.status] ?? o.status}</Tag>
  return (
    <Card
      title="订单管理"
      extra={
        <Space wrap>
          <Select
            value={query.status}
            onChange={(s) => set({ status: s })}
            style={{ width: 110 }}
            options={[{ value: '', label: '全部状态' }, ...Object.entries(statusLabels).map(([value, label]) => ({ value, label }))]}
          />
          <Select
            value={query.channel}
            onChange={(channel) => set({ channel })}
            style={{ width: 110 }}
            options={[{ value: '', label: '全部渠道' }, ...Object.entries(channelLabels).map(([value, label]) => ({ value, label }))]}
          />
          <Input.Search allowClear placeholder="订单号或用户名" onSearch={(v) => set({ q: v.trim() })} style={{ width: 200 }} data-testid="order-search" />
          <Button onClick={reconcile} loading={reconciling} data-testid="reconcile">
            立即对账
          </Button>
        </Space>
      }
    >
      <p className="muted">“立即对账”向支付服务商查询所有待支付订单：通知丢失的付款会补记到账（只记一次），过期订单会关闭。后台每 30 秒也会对账：每笔待支付订单按下单时长逐渐放慢查询（1 分钟到 1 小时一次）。</p>
      <ResponsiveTable<OrderRow>
        rowKey="id"
        loading={isFetching && !data}
        error={error as Error | null}
        onRetry={() => refetch()}
        dataSource={data?.records ?? []}
        scroll={{ x: 1060 }}
        locale={{ emptyText: '没有符合条件的订单' }}
        pagination={{ current: query.page, pageSize: PAGE_SIZE, total: data?.total ?? 0, onChange: (page) => setQuery((q) => ({ ...q, page })), showSizeChanger: false }}
        columns={[
          { title: '订单号', dataIndex: 'outTradeNo', width: 210 },
          { title: '用户', dataIndex: 'loginName', width: 100, ellipsis: true },
          {
            title: '内容',
            key: 'title',
            width: 150,
            ellipsis: true,
            render: (_: unknown, o) => (
              <>
                <div>{o.title}</div>
                <div className="muted">{KIND_NAMES[o.kind] ?? o.kind}</div>
              </>
            ),
          },
          { title: '渠道', dataIndex: 'channel', width: 90, render: (c: Channel) => channelLabels[c] ?? c },
          { title: '金额', dataIndex: 'amountFen', width: 80, align: 'right', render: formatFen },
          { title: '状态', key: 'status', width: 80, render: (_: unknown, o) => status(o) },
          {
            title: '退款',
            key: 'refunds',
            width: 190,
            render: (_: unknown, o) => <RefundCell order={o} onRefund={() => setRefunding(o)} />,
          },
          {
            title: '时间',
            key: 'times',
            width: 160,
            render: (_: unknown, o) => (
              <>
                <div>下单 {formatDateTime(o.createdAt)}</div>
                {o.paidAt && <div className="muted">支付 {formatDateTime(o.paidAt)}</div>}
              </>
            ),
          },
        ]}
        card={{
          title: (o) => o.title,
          status,
          figure: (o) => ({ label: '金额', value: formatFen(o.amountFen) }),
          meta: (o) => `${o.outTradeNo} · ${o.loginName} · ${formatDateTime(o.createdAt)}`,
          actions: (o) => <RefundCell order={o} onRefund={() => setRefunding(o)} />,
        }}
        cardTestId="order-card"
      />
      {refunding && <RefundDialog order={refunding} onClose={() => setRefunding(null)} />}
    </Card>
  )
}

/** Giving up a refund the provider never made: the provider is asked first, then the buyer's balance or package
 * uses come back. */
function AbandonDialog({ refund, onClose }: { refund: RefundRow; onClose: () => void }) {
  const client = useQueryClient()
  const [reason, setReason] = useState('')
  const [busy, setBusy] = useState(false)
  const submit = async () => {
    if (!reason.trim()) return
    setBusy(true)
    try {
      await abandonRefund(refund.refundNo, reason.trim())
      toastSuccess('已放弃这笔退款，收回的余额或套餐次数已还给用户')
      onClose()
    } catch {
      // Toasted by the client (the provider made the refund after all, say).
    } finally {
      setBusy(false)
      await client.invalidateQueries({ queryKey: ['admin', 'orders'] })
    }
  }
  return (
    <Modal open title="放弃退款" okText="确认放弃" cancelText="取消" onOk={submit} confirmLoading={busy} okButtonProps={{ danger: true, disabled: !reason.trim() }} onCancel={onClose}>
      <p>
        退款 {refund.refundNo}（{formatFen(refund.amountFen)}）尚未被支付服务商确认{refund.error ? `：${refund.error}` : ''}。放弃前会先向服务商核实这笔钱没有退出；
        放弃后，退款时收回的余额或套餐次数会还给用户，订单恢复为已支付。
      </p>
      <Form layout="vertical">
        <Form.Item label="放弃原因" required extra="用户的账户流水中会显示它">
          <Input value={reason} onChange={(e) => setReason(e.target.value)} maxLength={100} data-testid="abandon-reason" />
        </Form.Item>
      </Form>
    </Modal>
  )
}

const REFUND_TAGS: Record<RefundRow['status'], [string, string]> = {
  succeeded: ['green', '已退'],
  pending: ['orange', '退款中'],
  abandoning: ['orange', '放弃中'],
  abandoned: ['default', '已放弃'],
}

/** An order's refunds (confirmed, still being asked, or given up) and, while something is left, the refund button. */
function RefundCell({ order, onRefund }: { order: OrderRow; onRefund: () => void }) {
  const left = order.amountFen - order.refundedFen
  const [abandoning, setAbandoning] = useState<RefundRow | null>(null)
  return (
    <div data-testid="refund-cell">
      {order.refunds.map((r) => (
        <div key={r.refundNo} className="muted">
          <Tag color={REFUND_TAGS[r.status][0]} title={r.error ?? undefined}>
            {REFUND_TAGS[r.status][1]}
          </Tag>
          {formatFen(r.amountFen)} {r.reason}
          {(r.status === 'pending' || r.status === 'abandoning') && (
            <Button size="small" type="link" danger onClick={() => setAbandoning(r)} data-testid="refund-abandon">
              放弃退款
            </Button>
          )}
        </div>
      ))}
      {abandoning && <AbandonDialog refund={abandoning} onClose={() => setAbandoning(null)} />}
      {order.status === 'paid' && left > 0 && (
        <Button size="small" danger onClick={onRefund} data-testid="order-refund">
          退款
        </Button>
      )}
    </div>
  )
}

/** /admin/orders: every order by number, buyer, state and channel; reconcile with the providers now. */
export default function ConsoleOrders() {
  return (
    <OperatorGate>
      <div className="page-card">
        <OrdersBody />
      </div>
    </OperatorGate>
  )
}
