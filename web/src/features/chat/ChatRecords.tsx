import { useState } from 'react'
import { Button, Card, Empty, Space, Typography } from 'antd'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useNavigate } from 'react-router'
import { chatDelete, chatList, modeLabel, type ChatRecord } from './api'
import ResponsiveTable from '../../components/ResponsiveTable'
import { DeleteTaskButton, TaskStatusCell, isUnderway } from '../../components/TaskStatus'
import { useUserStore } from '../../stores/user'
import { formatDateTime } from '../../utils/format'
import { formatCharge } from '../order/paysWith'

/** The user's chat messages, newest first; 继续对话 reopens the conversation. */
export default function ChatRecords() {
  const token = useUserStore((s) => s.token)
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const [page, setPage] = useState(1)
  const list = useQuery({
    queryKey: ['chat', page],
    queryFn: () => chatList(page, 10),
    enabled: Boolean(token),
    refetchInterval: (q) => (q.state.data?.records.some((r) => isUnderway(r.status)) ? 2000 : false),
  })
  const actions = (r: ChatRecord) => (
    <Space size={4}>
      {r.status === 'done' && <Button size="small" type="link" onClick={() => navigate(`/nlp/machine?chat=${r.id}`)}>继续对话</Button>}
      <DeleteTaskButton
        what="对话记录"
        status={r.status}
        onDelete={async () => {
          await chatDelete(r.id)
          await queryClient.invalidateQueries({ queryKey: ['chat'] })
        }}
      />
    </Space>
  )
  const columns = [
    { title: '消息', dataIndex: 'message', key: 'message', ellipsis: true },
    { title: '方式', dataIndex: 'mode', key: 'mode', width: 100, render: (m: string) => modeLabel(m) },
    {
      title: '回答',
      key: 'reply',
      ellipsis: true,
      render: (_: unknown, r: ChatRecord) => <Typography.Text ellipsis>{r.reply ?? r.live ?? '—'}</Typography.Text>,
    },
    { title: '状态', key: 'status', width: 180, render: (_: unknown, r: ChatRecord) => <TaskStatusCell status={r.status} progress={r.status === 'done' ? 100 : 0} phase="" error={r.error} /> },
    { title: '扣费', dataIndex: 'chargedFen', key: 'fee', width: 90, render: (_: number, r: ChatRecord) => formatCharge(r.chargedFen, r.chargedUnits, '字') },
    { title: '时间', dataIndex: 'createdAt', key: 'createdAt', width: 160, render: (v: number) => formatDateTime(v) },
    {
      title: '操作',
      key: 'actions',
      width: 170,
      render: (_: unknown, r: ChatRecord) => actions(r),
    },
  ]
  return (
    <div className="page-card">
      <Card title="对话记录" extra={<Button type="primary" onClick={() => navigate('/nlp/machine?tab=chat')}>新对话</Button>}>
        <ResponsiveTable<ChatRecord>
          rowKey="id"
          loading={list.isLoading}
          error={list.error}
          onRetry={() => void list.refetch()}
          columns={columns}
          dataSource={list.data?.records ?? []}
          scroll={{ x: 900 }}
          pagination={{ current: page, pageSize: 10, total: list.data?.total ?? 0, onChange: setPage }}
          locale={{ emptyText: <Empty description={token ? '还没有对话记录' : '登录后查看对话记录'} /> }}
          card={{
            title: (r) => r.message,
            fullTitle: (r) => r.message,
            status: (r) => <TaskStatusCell status={r.status} progress={r.status === 'done' ? 100 : 0} phase="" error={r.error} />,
            meta: (r) => `${modeLabel(r.mode)} · 扣费 ${formatCharge(r.chargedFen, r.chargedUnits, '字')} · ${formatDateTime(r.createdAt)}`,
            actions,
          }}
        />
      </Card>
    </div>
  )
}
