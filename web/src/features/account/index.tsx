import { useState } from 'react'
import { useQuery } from '@tanstack/react-query'
import { Button, Card, Col, Empty, Form, Input, Row, Statistic, Tag } from 'antd'
import { changePassword, getAccount, type LedgerRow } from '../../api/user'
import { formatDateTime, formatFen } from '../../utils/format'
import { toastError, toastSuccess } from '../../utils/feedback'
import { useNavigate } from 'react-router'
import ResponsiveTable from '../../components/ResponsiveTable'
import { useIsPhone } from '../../utils/useMediaQuery'
import { newPasswordRules, confirmPasswordRules } from '../auth/rules'
import OrdersCard from '../order/OrdersCard'

const kindLabels: Record<string, string> = {
  qr_first_login_bonus: '赠送',
  operator_credit: '人工调整',
  task_charge: '任务扣费',
  task_refund: '任务退款',
  order_payment: '在线支付',
  order_refund: '订单退款',
}

/** /order/account: the real balance, free credits and ledger of the signed-in user. */
export default function AccountCenter() {
  const navigate = useNavigate()
  const { data, isLoading, error, refetch } = useQuery({ queryKey: ['account'], queryFn: getAccount })

  if (error) {
    return (
      <div className="page-card">
        <Card>
          <Empty description={`账户信息加载失败：${(error as Error).message}`}>
            <Button onClick={() => refetch()}>重试</Button>
          </Empty>
        </Card>
      </div>
    )
  }

  const money = (v: number) => (v === 0 ? '—' : <span className={v > 0 ? 'plus' : 'minus'}>{v > 0 ? '+' : ''}{formatFen(v)}</span>)
  const credits = (v: number) => (v === 0 ? '—' : <span className={v > 0 ? 'plus' : 'minus'}>{v > 0 ? `+${v}` : v} 次</span>)
  const kind = (v: string) => <Tag>{kindLabels[v] ?? v}</Tag>

  const columns = [
    { title: '时间', dataIndex: 'createdAt', key: 'createdAt', width: 170, render: (v: number) => formatDateTime(v) },
    { title: '类型', dataIndex: 'kind', key: 'kind', width: 100, render: kind },
    { title: '说明', dataIndex: 'reason', key: 'reason', width: 240 },
    {
      title: '金额变动',
      dataIndex: 'deltaFen',
      key: 'deltaFen',
      width: 120,
      render: money,
    },
    {
      title: '免费次数变动',
      dataIndex: 'deltaFreeChecks',
      key: 'deltaFreeChecks',
      width: 120,
      render: credits,
    },
    {
      title: '变动后',
      key: 'after',
      width: 170,
      render: (_: unknown, r: LedgerRow) => `${formatFen(r.balanceAfterFen)} / 免费 ${r.freeChecksAfter} 次`,
    },
  ]

  return (
    <div className="page-card">
      <Row gutter={[16, 16]}>
        <Col xs={24} md={8}>
          <Card loading={isLoading}>
            <Statistic title="账户余额" value={data ? formatFen(data.balanceFen) : '—'} />
            <Button type="primary" className="mt" onClick={() => navigate('/order/recharge')}>
              充值
            </Button>
          </Card>
        </Col>
        <Col xs={24} md={8}>
          <Card loading={isLoading}>
            <Statistic title="免费查重次数" value={data?.freeCheckCredits ?? '—'} suffix="次" data-testid="free-checks" />
            <Button className="mt" onClick={() => navigate('/order/taocan')}>
              购买套餐
            </Button>
          </Card>
        </Col>
        <Col xs={24} md={8}>
          <Card loading={isLoading}>
            <Statistic title="账号" value={data?.loginName ?? '—'} />
            <div className="muted mt">用户 ID：{data?.userId ?? '—'}</div>
          </Card>
        </Col>
      </Row>
      {(data?.grants?.length ?? 0) > 0 && (
        <Card title="套餐剩余" className="mt" data-testid="grants">
          {data?.grants?.map((g) => (
            <div key={`${g.kind}-${g.expiresAt}-${g.total}`} className="grant-row">
              <span>{g.label}</span>
              <span>
                剩余 <strong>{g.remaining.toLocaleString('zh-CN')}</strong> / {g.total.toLocaleString('zh-CN')}
                {' '}{g.unit}
              </span>
              <span className="muted">有效期至 {formatDateTime(g.expiresAt)}</span>
            </div>
          ))}
        </Card>
      )}
      {(data?.grantUses?.length ?? 0) > 0 && (
        <Card title="套餐使用记录" className="mt" data-testid="grant-uses">
          {data?.grantUses?.map((u, i) => (
            <div key={`${u.taskId}-${u.createdAt}-${i}`} className="grant-row">
              <span>{u.reason}</span>
              <span>{u.units > 0 ? `${u.package} −${u.units.toLocaleString('zh-CN')} ${u.unit}` : `${u.package} 已退回`}</span>
              <span className="muted">{formatDateTime(u.createdAt)}</span>
            </div>
          ))}
        </Card>
      )}
      <OrdersCard />
      <Card title="账户流水" className="mt">
        <ResponsiveTable<LedgerRow>
          rowKey="id"
          size="middle"
          loading={isLoading}
          columns={columns}
          dataSource={data?.ledger ?? []}
          pagination={false}
          scroll={{ x: 760 }}
          locale={{ emptyText: <Empty description="暂无账户流水" /> }}
          cardTestId="ledger-card"
          card={{
            title: (r) => r.reason || kindLabels[r.kind] || r.kind,
            status: (r) => kind(r.kind),
            figure: (r) =>
              r.deltaFen !== 0
                ? { label: '金额变动', value: money(r.deltaFen) }
                : { label: '免费次数变动', value: credits(r.deltaFreeChecks) },
            meta: (r) => `${formatDateTime(r.createdAt)} · 变动后 ${formatFen(r.balanceAfterFen)} / 免费 ${r.freeChecksAfter} 次`,
          }}
        />
      </Card>
      <ChangePasswordCard loginName={data?.loginName ?? ''} />
    </div>
  )
}

function ChangePasswordCard({ loginName }: { loginName: string }) {
  const phone = useIsPhone()
  const [form] = Form.useForm()
  const [saving, setSaving] = useState(false)
  const submit = async (v: { old: string; next: string }) => {
    if (saving) return
    setSaving(true)
    try {
      await changePassword(v.old ?? '', v.next)
      toastSuccess('密码已修改，其他设备上的登录已退出')
      form.resetFields()
    } catch (e) {
      toastError((e as Error).message)
    } finally {
      setSaving(false)
    }
  }
  return (
    <Card title="修改密码" className="mt change-password">
      <Form form={form} layout={phone ? 'vertical' : 'inline'} onFinish={submit} requiredMark={false} name="change-password">
        <Form.Item name="old">
          <Input.Password placeholder="原密码" autoComplete="current-password" />
        </Form.Item>
        <Form.Item name="next" validateTrigger="onBlur" rules={newPasswordRules({ username: loginName })}>
          <Input.Password placeholder="新密码（≥8 位，含字母和数字）" autoComplete="new-password" />
        </Form.Item>
        <Form.Item name="confirm" dependencies={['next']} validateTrigger="onBlur" rules={confirmPasswordRules('next')}>
          <Input.Password placeholder="确认新密码" autoComplete="new-password" />
        </Form.Item>
        <Button htmlType="submit" loading={saving}>
          修改密码
        </Button>
      </Form>
      {/* Below the whole row: as a field's extra it would break the inline layout. */}
      <div className="muted mt-s">忘记原密码：用手机扫码登录后 15 分钟内，可不填原密码直接设置新密码。</div>
    </Card>
  )
}
