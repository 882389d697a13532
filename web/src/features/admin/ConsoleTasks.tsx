import { useState } from 'react'
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query'
import { Button, Card, Form, Input, Modal, Popconfirm, Select, Space } from 'antd'
import OperatorGate from './OperatorGate'
import { validated } from './validated'
import { cancelTask, retryTask, searchTasks, type TaskQuery } from './api'
import { KIND_LABELS, kindLabel } from './labels'
import type { TaskRow } from './types'
import ResponsiveTable from '../../components/ResponsiveTable'
import { STATUS, TaskStatusCell } from '../../components/TaskStatus'
import type { TaskStatus } from '../check/types'
import { formatDateTime, formatFen } from '../../utils/format'
import { toastSuccess } from '../../utils/feedback'

const PAGE_SIZE = 20

function CancelModal({ task, onClose, onDone }: { task: TaskRow; onClose: () => void; onDone: () => void }) {
  const [form] = Form.useForm<{ reason: string }>()
  const [saving, setSaving] = useState(false)
  const submit = async () => {
    const checked = await validated(form)
    if (!checked) return
    const { reason } = checked
    setSaving(true)
    try {
      await cancelTask(task.id, reason)
      toastSuccess(task.chargedFen > 0 || task.chargedFree > 0 || task.chargedUnits > 0 ? '任务已取消，费用已按规则退回' : '任务已取消')
      onDone()
      onClose()
    } catch {
      // Toasted by the client.
    } finally {
      setSaving(false)
    }
  }
  return (
    <Modal open title={`取消任务 #${task.id}`} okText="取消任务" okButtonProps={{ danger: true }} cancelText="返回" onOk={submit} onCancel={onClose} confirmLoading={saving} destroyOnHidden>
      <p className="muted">“{task.title}”（{task.loginName}）。取消后按规则退款一次（已交付的部分除外），原因会显示在用户的任务上。</p>
      <Form form={form} layout="vertical">
        <Form.Item name="reason" label="取消原因" rules={[{ required: true, whitespace: true, message: '请填写取消原因' }, { max: 100, message: '至多 100 个字' }]}>
          <Input placeholder="例如：用户来电要求取消、文件内容违规" data-testid="cancel-reason" />
        </Form.Item>
      </Form>
    </Modal>
  )
}

/** What stays charged, however it was paid: balance, free checks, package units. */
function charged(t: TaskRow) {
  const parts = [formatFen(t.chargedFen)]
  if (t.chargedFree > 0) parts.push(`免费 ${t.chargedFree} 次`)
  if (t.chargedUnits > 0) parts.push(`套餐 ${t.chargedUnits}`)
  return parts.join(' + ')
}

/** The status with its reason (a failure's error, a cancellation's reason). */
function statusCell(t: TaskRow) {
  return <TaskStatusCell status={t.status as TaskStatus} progress={t.progress} phase={t.phase} error={t.error} running="运行中" />
}

function TasksBody() {
  const client = useQueryClient()
  const [query, setQuery] = useState<TaskQuery>({ q: '', status: '', kind: '', page: 1, size: PAGE_SIZE })
  const [cancelling, setCancelling] = useState<TaskRow | null>(null)
  const { data, error, refetch, isFetching } = useQuery({
    queryKey: ['admin', 'tasks', query],
    queryFn: () => searchTasks(query),
    placeholderData: keepPreviousData,
    refetchInterval: 10_000,
  })
  // A cancel refunds and a retry queues: balances, the dashboard and user details change too.
  const refresh = () => client.invalidateQueries({ queryKey: ['admin'] })
  const set = (patch: Partial<TaskQuery>) => setQuery((q) => ({ ...q, page: 1, ...patch }))
  const actions = (t: TaskRow) => (
    <Space size={4}>
      {t.submitted && (t.status === 'failed' || t.status === 'cancelled') && (
        <Popconfirm
          title="重新运行该任务？"
          description="免费重试：不会再次向用户收费。"
          okText="重试"
          cancelText="取消"
          onConfirm={async () => {
            await retryTask(t.id)
            toastSuccess('已重新排队')
            refresh()
          }}
        >
          <Button size="small" data-testid={`retry-${t.id}`}>重试</Button>
        </Popconfirm>
      )}
      {['pending', 'queued', 'running'].includes(t.status) && (
        <Button size="small" danger onClick={() => setCancelling(t)} data-testid={`cancel-${t.id}`}>
          取消
        </Button>
      )}
    </Space>
  )
  return (
    <Card
      title="任务管理"
      extra={
        <Space wrap>
          <Select
            value={query.status}
            onChange={(status) => set({ status })}
            style={{ width: 120 }}
            options={[{ value: '', label: '全部状态' }, ...Object.entries(STATUS).map(([value, s]) => ({ value, label: value === 'running' ? '运行中' : s.label }))]}
            data-testid="status-filter"
          />
          <Select
            value={query.kind}
            onChange={(kind) => set({ kind })}
            style={{ width: 140 }}
            options={[{ value: '', label: '全部类型' }, ...Object.entries(KIND_LABELS).map(([value, label]) => ({ value, label }))]}
          />
          <Input.Search allowClear placeholder="按标题搜索" onSearch={(v) => set({ q: v.trim() })} style={{ width: 200 }} />
        </Space>
      }
    >
      <ResponsiveTable<TaskRow>
        rowKey="id"
        loading={isFetching && !data}
        error={error as Error | null}
        onRetry={() => refetch()}
        dataSource={data?.records ?? []}
        scroll={{ x: 1000 }}
        locale={{ emptyText: '没有符合条件的任务' }}
        pagination={{ current: query.page, pageSize: PAGE_SIZE, total: data?.total ?? 0, onChange: (page) => setQuery((q) => ({ ...q, page })), showSizeChanger: false }}
        columns={[
          { title: 'ID', dataIndex: 'id', width: 70 },
          { title: '用户', dataIndex: 'loginName', width: 150 },
          { title: '类型', dataIndex: 'kind', width: 110, render: kindLabel },
          { title: '标题', dataIndex: 'title', ellipsis: true },
          { title: '状态', key: 'status', width: 200, render: (_: unknown, t) => statusCell(t) },
          { title: '实付', key: 'charged', width: 130, align: 'right', render: (_: unknown, t) => charged(t) },
          { title: '创建时间', dataIndex: 'createdAt', width: 160, render: formatDateTime },
          { title: '操作', key: 'actions', width: 120, render: (_: unknown, t) => actions(t) },
        ]}
        card={{
          title: (t) => t.title,
          status: (t) => statusCell(t),
          meta: (t) => `${kindLabel(t.kind)} · ${t.loginName} · ${formatDateTime(t.createdAt)}`,
          actions,
        }}
        cardTestId="task-card"
      />
      {cancelling && <CancelModal task={cancelling} onClose={() => setCancelling(null)} onDone={refresh} />}
    </Card>
  )
}

/** /admin/tasks: every user's tasks by state and kind; a failed one's error; retry and cancel. */
export default function ConsoleTasks() {
  return (
    <OperatorGate>
      <div className="page-card">
        <TasksBody />
      </div>
    </OperatorGate>
  )
}
