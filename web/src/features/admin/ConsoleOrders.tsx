import { useState } from 'react'
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query'
import { Button, Card, Input, Select, Space, Tag } from 'antd'
import OperatorGate from './OperatorGate'
import { reconcileOrders, searchOrders, type OrderQuery } from './api'
import type { OrderRow } from './types'
import ResponsiveTable from '../../components/ResponsiveTable'
import { channelLabels, statusLabels, type Channel, type Order } from '../order/types'
import { formatDateTime, formatFen } from '../../utils/format'
import { toastSuccess } from '../../utils/feedback'

const PAGE_SIZE = 20
const STATUS_COLORS: Record<Order['status'], string> = { pending: 'blue', paid: 'green', closed: 'default', refunded: 'orange' }
const KIND_NAMES: Record<string, string> = { package: '套餐', top_up: '充值', task: '任务支付' }

function OrdersBody() {
  const client = useQueryClient()
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
      const { paid, closed } = await reconcileOrders()
      toastSuccess(paid || closed ? `对账完成：${paid} 笔补记为已支付，${closed} 笔过期关闭` : '对账完成：没有需要更正的订单')
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
      <p className="muted">“立即对账”向支付服务商查询所有待支付订单：通知丢失的付款会补记到账（只记一次），过期订单会关闭。后台每分钟也会自动对账。</p>
      <ResponsiveTable<OrderRow>
        rowKey="id"
        loading={isFetching && !data}
        error={error as Error | null}
        onRetry={() => refetch()}
        dataSource={data?.records ?? []}
        scroll={{ x: 1100 }}
        locale={{ emptyText: '没有符合条件的订单' }}
        pagination={{ current: query.page, pageSize: PAGE_SIZE, total: data?.total ?? 0, onChange: (page) => setQuery((q) => ({ ...q, page })), showSizeChanger: false }}
        columns={[
          { title: '订单号', dataIndex: 'outTradeNo', width: 230 },
          { title: '用户', dataIndex: 'loginName', width: 150 },
          { title: '类型', dataIndex: 'kind', width: 90, render: (k: string) => KIND_NAMES[k] ?? k },
          { title: '内容', dataIndex: 'title', width: 180, ellipsis: true },
          { title: '渠道', dataIndex: 'channel', width: 90, render: (c: Channel) => channelLabels[c] ?? c },
          { title: '金额', dataIndex: 'amountFen', width: 90, align: 'right', render: formatFen },
          { title: '状态', key: 'status', width: 90, render: (_: unknown, o) => status(o) },
          {
            title: '时间',
            key: 'times',
            width: 190,
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
        }}
        cardTestId="order-card"
      />
    </Card>
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
