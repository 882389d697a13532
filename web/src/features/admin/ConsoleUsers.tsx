import { useState } from 'react'
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query'
import { Button, Card, Descriptions, Drawer, Empty, Form, Input, InputNumber, Modal, Popconfirm, Radio, Space, Tabs, Tag } from 'antd'
import OperatorGate from './OperatorGate'
import { validated } from './validated'
import { adjustBalance, resetPassword, searchUsers, setDisabled, setOperator, userDetail } from './api'
import { kindLabel } from './labels'
import type { TaskRow, UserDetail, UserRow } from './types'
import ResponsiveTable from '../../components/ResponsiveTable'
import { TaskStatusCell } from '../../components/TaskStatus'
import type { TaskStatus } from '../check/types'
import { formatDateTime, formatFen } from '../../utils/format'
import { toastSuccess } from '../../utils/feedback'
import { useUserStore } from '../../stores/user'
import { newPasswordRules } from '../auth/rules'
import type { LedgerRow } from '../../api/user'
import { statusLabels, type Order } from '../order/types'

const PAGE_SIZE = 20

function StateTags({ user }: { user: UserRow }) {
  return (
    <Space size={4}>
      {user.operator && <Tag color="blue">运营</Tag>}
      {user.disabled ? <Tag color="red">已停用</Tag> : <Tag color="green">正常</Tag>}
    </Space>
  )
}

/** Credit or debit with a required reason; the amount is typed in yuan. */
function BalanceModal({ user, onClose, onDone }: { user: UserRow; onClose: () => void; onDone: (d: UserDetail) => void }) {
  const [form] = Form.useForm<{ direction: 'credit' | 'debit'; yuan: number; reason: string }>()
  const [saving, setSaving] = useState(false)
  const submit = async () => {
    const checked = await validated(form)
    if (!checked) return
    const v = checked
    const fen = Math.round(v.yuan * 100) * (v.direction === 'debit' ? -1 : 1)
    setSaving(true)
    try {
      const detail = await adjustBalance(user.id, fen, v.reason)
      toastSuccess(`已${fen > 0 ? '增加' : '扣减'} ${formatFen(Math.abs(fen))}`)
      onDone(detail)
      onClose()
    } catch {
      // The server's reason was toasted; the dialog stays open to correct it.
    } finally {
      setSaving(false)
    }
  }
  return (
    <Modal open title={`调整余额：${user.loginName}`} okText="确认调整" cancelText="取消" onOk={submit} onCancel={onClose} confirmLoading={saving} destroyOnHidden>
      <p className="muted">当前余额 {formatFen(user.balanceFen)}。调整会记入用户的账户流水（带原因）和操作日志；扣减不能超过当前余额。</p>
      <Form form={form} layout="vertical" initialValues={{ direction: 'credit' }}>
        <Form.Item name="direction" label="方向">
          <Radio.Group optionType="button" options={[{ value: 'credit', label: '增加' }, { value: 'debit', label: '扣减' }]} />
        </Form.Item>
        <Form.Item name="yuan" label="金额（元）" rules={[{ required: true, message: '请输入金额' }, { type: 'number', min: 0.01, max: 100000, message: '金额须在 0.01–100000 元之间（方向在上面选择）' }]}>
          <InputNumber precision={2} style={{ width: '100%' }} data-testid="balance-amount" />
        </Form.Item>
        <Form.Item name="reason" label="原因（用户可在流水中看到）" rules={[{ required: true, whitespace: true, message: '请填写原因' }, { max: 100, message: '至多 100 个字' }]}>
          <Input placeholder="例如：系统故障补偿、线下转账充值" data-testid="balance-reason" />
        </Form.Item>
      </Form>
    </Modal>
  )
}

function PasswordModal({ user, onClose }: { user: UserRow; onClose: () => void }) {
  const [form] = Form.useForm<{ password: string }>()
  const [saving, setSaving] = useState(false)
  const submit = async () => {
    const checked = await validated(form)
    if (!checked) return
    const v = checked
    setSaving(true)
    try {
      await resetPassword(user.id, v.password)
      toastSuccess('密码已重置，该用户的所有登录已失效')
      onClose()
    } catch {
      // Toasted by the client.
    } finally {
      setSaving(false)
    }
  }
  return (
    <Modal open title={`重置密码：${user.loginName}`} okText="重置" cancelText="取消" onOk={submit} onCancel={onClose} confirmLoading={saving} destroyOnHidden>
      <p className="muted">新密码请通过可靠渠道告知用户；重置后该用户在所有设备上的登录都会失效。操作日志只记录“重置密码”，不记录密码。</p>
      <Form form={form} layout="vertical">
        <Form.Item name="password" label="新密码" rules={newPasswordRules({ username: user.loginName })}>
          <Input.Password autoComplete="new-password" />
        </Form.Item>
      </Form>
    </Modal>
  )
}

function DetailDrawer({ userId, onClose }: { userId: number; onClose: () => void }) {
  const client = useQueryClient()
  const me = useUserStore((s) => s.id)
  const { data, error, refetch } = useQuery({ queryKey: ['admin', 'user', userId], queryFn: () => userDetail(userId) })
  const [dialog, setDialog] = useState<'balance' | 'password' | null>(null)
  const changed = (detail: UserDetail) => {
    client.setQueryData(['admin', 'user', userId], detail)
    client.invalidateQueries({ queryKey: ['admin', 'users'] })
    client.invalidateQueries({ queryKey: ['admin', 'dashboard'] })
    client.invalidateQueries({ queryKey: ['admin', 'audit'] })
  }
  const user = data?.user
  const self = user?.id === me
  return (
    <Drawer open onClose={onClose} title={user ? `用户：${user.loginName}` : '用户'} size="large" destroyOnHidden>
      {error ? (
        <Empty description={`加载失败：${(error as Error).message}`}>
          <Button onClick={() => refetch()}>重试</Button>
        </Empty>
      ) : !data || !user ? (
        <Card loading />
      ) : (
        <>
          <Descriptions size="small" column={{ xs: 1, sm: 2 }} bordered>
            <Descriptions.Item label="用户 ID">{user.id}</Descriptions.Item>
            <Descriptions.Item label="状态"><StateTags user={user} /></Descriptions.Item>
            <Descriptions.Item label="余额">{formatFen(user.balanceFen)}</Descriptions.Item>
            <Descriptions.Item label="免费查重">{user.freeChecks} 次</Descriptions.Item>
            <Descriptions.Item label="累计在线支付">{formatFen(user.paidFen)}</Descriptions.Item>
            <Descriptions.Item label="注册时间">{formatDateTime(user.createdAt)}</Descriptions.Item>
          </Descriptions>
          <Space wrap className="mt">
            <Button type="primary" onClick={() => setDialog('balance')} data-testid="adjust-balance">调整余额</Button>
            <Popconfirm
              title={user.disabled ? '启用后该用户可以重新登录。' : '停用后该用户会立即退出所有设备，且无法再登录。'}
              okText={user.disabled ? '启用' : '停用'}
              cancelText="取消"
              disabled={self}
              onConfirm={async () => changed(await setDisabled(user.id, !user.disabled))}
            >
              <Button danger={!user.disabled} disabled={self} data-testid="toggle-disabled">{user.disabled ? '启用账号' : '停用账号'}</Button>
            </Popconfirm>
            <Button onClick={() => setDialog('password')} disabled={user.operator} title={user.operator ? '运营账号的密码只能由本人在“修改密码”中更改' : undefined}>
              重置密码
            </Button>
            <Popconfirm
              title={user.operator ? '取消后该用户不能再进入运营后台。' : '授予后该用户可以使用运营后台的全部功能。'}
              okText="确认"
              cancelText="取消"
              disabled={self}
              onConfirm={async () => changed(await setOperator(user.id, !user.operator))}
            >
              <Button disabled={self}>{user.operator ? '取消运营权限' : '授予运营权限'}</Button>
            </Popconfirm>
          </Space>
          {self && <p className="muted">不能停用自己或取消自己的运营权限。</p>}
          {user.operator && <p className="muted">运营账号的密码只能由本人在“修改密码”中更改。</p>}
          <Tabs
            className="mt"
            items={[
              {
                key: 'tasks',
                label: `最近任务（共 ${user.tasks} 个）`,
                children: (
                  <ResponsiveTable<TaskRow>
                    size="small"
                    rowKey="id"
                    pagination={false}
                    scroll={{ x: 560 }}
                    dataSource={data.tasks}
                    locale={{ emptyText: '没有任务' }}
                    card={{
                      title: (t) => t.title,
                      status: (t) => <TaskStatusCell status={t.status as TaskStatus} progress={t.progress} phase={t.phase} error={t.error} running="运行中" />,
                      meta: (t) => `${kindLabel(t.kind)} · ${formatDateTime(t.createdAt)}`,
                    }}
                    columns={[
                      { title: '类型', dataIndex: 'kind', width: 100, render: kindLabel },
                      { title: '标题', dataIndex: 'title', ellipsis: true },
                      { title: '状态', key: 'status', width: 150, render: (_: unknown, t) => <TaskStatusCell status={t.status as TaskStatus} progress={t.progress} phase={t.phase} error={t.error} running="运行中" /> },
                      { title: '创建', dataIndex: 'createdAt', width: 150, render: formatDateTime },
                    ]}
                  />
                ),
              },
              {
                key: 'orders',
                label: `最近订单（${data.orders.length}）`,
                children: (
                  <ResponsiveTable<Order>
                    size="small"
                    rowKey="id"
                    pagination={false}
                    scroll={{ x: 560 }}
                    dataSource={data.orders}
                    locale={{ emptyText: '没有订单' }}
                    card={{
                      title: (o) => o.title,
                      status: (o) => statusLabels[o.status] ?? o.status,
                      figure: (o) => ({ label: '金额', value: formatFen(o.amountFen) }),
                      meta: (o) => `${o.outTradeNo} · ${formatDateTime(o.createdAt)}`,
                    }}
                    columns={[
                      { title: '订单号', dataIndex: 'outTradeNo', width: 200 },
                      { title: '内容', dataIndex: 'title', ellipsis: true },
                      { title: '金额', dataIndex: 'amountFen', width: 90, render: formatFen },
                      { title: '状态', dataIndex: 'status', width: 80, render: (v: Order['status']) => statusLabels[v] ?? v },
                      { title: '创建', dataIndex: 'createdAt', width: 150, render: formatDateTime },
                    ]}
                  />
                ),
              },
              {
                key: 'ledger',
                label: '账户流水',
                children: (
                  <ResponsiveTable<LedgerRow>
                    size="small"
                    rowKey="id"
                    pagination={false}
                    scroll={{ x: 560 }}
                    dataSource={data.account.ledger}
                    locale={{ emptyText: '没有流水' }}
                    card={{
                      title: (r) => r.reason,
                      figure: (r) => ({ label: '变动', value: <span className={r.deltaFen >= 0 ? 'plus' : 'minus'}>{r.deltaFen > 0 ? '+' : ''}{formatFen(r.deltaFen)}</span> }),
                      meta: (r) => `${formatDateTime(r.createdAt)} · 余额 ${formatFen(r.balanceAfterFen)}`,
                    }}
                    columns={[
                      { title: '时间', dataIndex: 'createdAt', width: 150, render: formatDateTime },
                      { title: '说明', dataIndex: 'reason', ellipsis: true },
                      { title: '变动', dataIndex: 'deltaFen', width: 90, render: (v: number) => <span className={v >= 0 ? 'plus' : 'minus'}>{v > 0 ? '+' : ''}{formatFen(v)}</span> },
                      { title: '余额', dataIndex: 'balanceAfterFen', width: 90, render: formatFen },
                    ]}
                  />
                ),
              },
            ]}
          />
          {dialog === 'balance' && <BalanceModal user={user} onClose={() => setDialog(null)} onDone={changed} />}
          {dialog === 'password' && <PasswordModal user={user} onClose={() => setDialog(null)} />}
        </>
      )}
    </Drawer>
  )
}

function UsersBody() {
  const [query, setQuery] = useState('')
  const [page, setPage] = useState(1)
  const [open, setOpen] = useState<number | null>(null)
  const { data, error, refetch, isFetching } = useQuery({
    queryKey: ['admin', 'users', query, page],
    queryFn: () => searchUsers(query, page, PAGE_SIZE),
    placeholderData: keepPreviousData,
  })
  return (
    <Card
      title="用户管理"
      extra={
        <Input.Search
          allowClear
          placeholder="按登录名搜索"
          onSearch={(v) => {
            setQuery(v.trim())
            setPage(1)
          }}
          style={{ width: 220 }}
          data-testid="user-search"
        />
      }
    >
      <ResponsiveTable<UserRow>
        rowKey="id"
        loading={isFetching && !data}
        error={error as Error | null}
        onRetry={() => refetch()}
        dataSource={data?.records ?? []}
        scroll={{ x: 800 }}
        locale={{ emptyText: query ? `没有登录名包含“${query}”的用户` : '还没有用户' }}
        pagination={{ current: page, pageSize: PAGE_SIZE, total: data?.total ?? 0, onChange: setPage, showSizeChanger: false }}
        onRow={(u) => ({ onClick: () => setOpen(u.id), style: { cursor: 'pointer' } })}
        columns={[
          { title: 'ID', dataIndex: 'id', width: 70 },
          { title: '登录名', dataIndex: 'loginName', render: (v: string, u) => <a onClick={() => setOpen(u.id)}>{v}</a> },
          { title: '状态', key: 'state', width: 130, render: (_: unknown, u) => <StateTags user={u} /> },
          { title: '余额', dataIndex: 'balanceFen', width: 100, align: 'right', render: formatFen },
          { title: '免费查重', dataIndex: 'freeChecks', width: 90, align: 'right' },
          { title: '任务数', dataIndex: 'tasks', width: 80, align: 'right' },
          { title: '累计支付', dataIndex: 'paidFen', width: 100, align: 'right', render: formatFen },
          { title: '注册时间', dataIndex: 'createdAt', width: 160, render: formatDateTime },
        ]}
        card={{
          title: (u) => u.loginName,
          status: (u) => <StateTags user={u} />,
          figure: (u) => ({ label: '余额', value: formatFen(u.balanceFen) }),
          meta: (u) => `任务 ${u.tasks} · 注册于 ${formatDateTime(u.createdAt)}`,
          actions: (u) => <Button size="small" onClick={() => setOpen(u.id)}>查看</Button>,
        }}
        cardTestId="user-card"
      />
      {open !== null && <DetailDrawer userId={open} onClose={() => setOpen(null)} />}
    </Card>
  )
}

/** /admin/users: search users; view one's tasks, orders and ledger; money, access and role. */
export default function ConsoleUsers() {
  return (
    <OperatorGate>
      <div className="page-card">
        <UsersBody />
      </div>
    </OperatorGate>
  )
}
