import { useState } from 'react'
import { useQuery } from '@tanstack/react-query'
import { Button, Card, Col, Empty, Form, Input, Row, Statistic, Table, Tag } from 'antd'
import { changePassword, getAccount, type LedgerRow } from '../../api/user'
import { formatDateTime, formatFen } from '../../utils/format'
import { toastError, toastSuccess } from '../../utils/feedback'
import { useNavigate } from 'react-router'

const kindLabels: Record<string, string> = {
  qr_first_login_bonus: '赠送',
  operator_credit: '人工调整',
  task_charge: '任务扣费',
  task_refund: '任务退款',
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

  const columns = [
    { title: '时间', dataIndex: 'createdAt', key: 'createdAt', width: 170, render: (v: number) => formatDateTime(v) },
    { title: '类型', dataIndex: 'kind', key: 'kind', width: 100, render: (v: string) => <Tag>{kindLabels[v] ?? v}</Tag> },
    { title: '说明', dataIndex: 'reason', key: 'reason', width: 240 },
    {
      title: '金额变动',
      dataIndex: 'deltaFen',
      key: 'deltaFen',
      width: 120,
      render: (v: number) => (v === 0 ? '—' : <span className={v > 0 ? 'plus' : 'minus'}>{v > 0 ? '+' : ''}{formatFen(v)}</span>),
    },
    {
      title: '免费次数变动',
      dataIndex: 'deltaFreeChecks',
      key: 'deltaFreeChecks',
      width: 120,
      render: (v: number) => (v === 0 ? '—' : <span className={v > 0 ? 'plus' : 'minus'}>{v > 0 ? `+${v}` : v}</span>),
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
      <Card title="账户流水" className="mt">
        <Table<LedgerRow>
          rowKey="id"
          size="middle"
          loading={isLoading}
          columns={columns}
          dataSource={data?.ledger ?? []}
          pagination={false}
          scroll={{ x: 760 }}
          locale={{ emptyText: <Empty description="暂无账户流水" /> }}
        />
      </Card>
      <ChangePasswordCard />
    </div>
  )
}

function ChangePasswordCard() {
  const [form] = Form.useForm()
  const [saving, setSaving] = useState(false)
  const submit = async (v: { old: string; next: string }) => {
    if (saving) return
    setSaving(true)
    try {
      await changePassword(v.old, v.next)
      toastSuccess('密码已修改，其他设备上的登录已退出')
      form.resetFields()
    } catch (e) {
      toastError((e as Error).message)
    } finally {
      setSaving(false)
    }
  }
  return (
    <Card title="修改密码" className="mt">
      <Form form={form} layout="inline" onFinish={submit} requiredMark={false} name="change-password">
        <Form.Item name="old" rules={[{ required: true, message: '请输入原密码' }]}>
          <Input.Password placeholder="原密码" autoComplete="current-password" />
        </Form.Item>
        <Form.Item name="next" rules={[{ required: true, message: '请输入新密码' }, { min: 8, message: '新密码至少 8 个字符' }]}>
          <Input.Password placeholder="新密码（至少 8 位）" autoComplete="new-password" />
        </Form.Item>
        <Button htmlType="submit" loading={saving}>
          修改密码
        </Button>
      </Form>
    </Card>
  )
}
