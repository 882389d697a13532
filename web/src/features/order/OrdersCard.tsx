import { Card, Empty, Tag } from 'antd'
import { useQuery } from '@tanstack/react-query'
import { orderList } from './api'
import { channelLabels, statusLabels, type Order } from './types'
import ResponsiveTable from '../../components/ResponsiveTable'
import { formatDateTime, formatFen } from '../../utils/format'

const statusColors: Record<Order['status'], string> = { pending: 'processing', paid: 'success', closed: 'default', refunded: 'warning' }

function granted(o: Order): string {
  if (o.kind === 'package') return o.grantLabel ?? o.title
  return o.creditFen > o.amountFen ? `余额 ${formatFen(o.creditFen)}（含赠送 ${formatFen(o.creditFen - o.amountFen)}）` : `余额 ${formatFen(o.creditFen)}`
}

/** The account centre's order list: what was bought, how, and what it granted. */
export default function OrdersCard() {
  const orders = useQuery({ queryKey: ['orders'], queryFn: () => orderList(1, 20) })
  // A part refunded shows beside the status (已支付 · 已退 ¥10.00); money the provider has not sent back yet is
  // 退款处理中, never 已退款.
  const status = (o: Order) => {
    const pending = o.refundPendingFen ?? 0
    const confirmed = o.refundedFen - pending
    const processing = o.status === 'refunded' && pending > 0
    return (
      <>
        <Tag color={processing ? 'processing' : statusColors[o.status]}>{processing ? '退款处理中' : statusLabels[o.status]}</Tag>
        {confirmed > 0 && (o.status === 'paid' || processing) && (
          <Tag color="warning" data-testid="order-part-refunded">
            已退 {formatFen(confirmed)}
          </Tag>
        )}
        {pending > 0 && o.status === 'paid' && (
          <Tag color="processing" data-testid="order-refund-pending">
            退款处理中 {formatFen(pending)}
          </Tag>
        )}
      </>
    )
  }
  const columns = [
    { title: '下单时间', dataIndex: 'createdAt', key: 'createdAt', width: 170, render: (v: number) => formatDateTime(v) },
    { title: '商品', dataIndex: 'title', key: 'title', width: 140 },
    { title: '金额', dataIndex: 'amountFen', key: 'amountFen', width: 100, render: (v: number) => formatFen(v) },
    { title: '到账', key: 'granted', width: 200, render: (_: unknown, o: Order) => granted(o) },
    { title: '支付方式', dataIndex: 'channel', key: 'channel', width: 100, render: (v: Order['channel']) => channelLabels[v] ?? v },
    { title: '状态', key: 'status', width: 170, render: (_: unknown, o: Order) => status(o) },
    { title: '订单号', dataIndex: 'outTradeNo', key: 'outTradeNo', width: 200 },
  ]
  return (
    <Card title="我的订单" className="mt">
      <ResponsiveTable<Order>
        rowKey="id"
        size="middle"
        loading={orders.isLoading}
        columns={columns}
        dataSource={orders.data?.list ?? []}
        pagination={false}
        scroll={{ x: 900 }}
        locale={{ emptyText: <Empty description="暂无订单" /> }}
        cardTestId="order-card"
        card={{
          title: (o) => o.title,
          status,
          figure: (o) => ({ label: '金额', value: formatFen(o.amountFen) }),
          meta: (o) => `${formatDateTime(o.createdAt)} · ${channelLabels[o.channel] ?? o.channel} · 到账 ${granted(o)}`,
        }}
      />
    </Card>
  )
}
