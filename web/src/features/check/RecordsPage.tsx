import { useState } from 'react'
import { Button, Card, Empty, Input, Modal, Space } from 'antd'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useNavigate } from 'react-router'
import { deleteCheck, downloadReport, queryList, updateTitle } from './api'
import type { CheckRecord } from './types'
import { DeleteTaskButton, TaskStatusCell, isUnderway } from '../../components/TaskStatus'
import ResponsiveTable, { titleColumn } from '../../components/ResponsiveTable'
import { useUserStore } from '../../stores/user'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { formatDateTime } from '../../utils/format'
import { toastError } from '../../utils/feedback'

/** /paper/report — the user's checks, live progress while running; each report opens on its own page. */
export default function RecordsPage() {
  const token = useUserStore((s) => s.token)
  const openLogin = useLoginDialogStore((s) => s.open)
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const [page, setPage] = useState(1)
  const [renaming, setRenaming] = useState<{ id: number; title: string } | null>(null)
  const list = useQuery({
    queryKey: ['checks', page],
    queryFn: () => queryList(page, 10),
    enabled: Boolean(token),
    // Poll while something is still on its way.
    refetchInterval: (q) => (q.state.data?.records.some((r) => isUnderway(r.status)) ? 2000 : false),
  })
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['checks'] })

  if (!token) {
    return (
      <div className="page-card">
        <Card>
          <Empty description="登录后查看您的查重记录">
            <Button type="primary" onClick={() => openLogin()}>登录</Button>
          </Empty>
        </Card>
      </div>
    )
  }

  const ratio = (r: CheckRecord) => (r.ratioTotal == null ? '—' : <b data-testid="ratio-total">{r.ratioTotal.toFixed(1)}%</b>)
  const actions = (r: CheckRecord) => (
    <Space size={4} wrap>
      {r.status === 'done' && <Button size="small" type="link" onClick={() => navigate(`/paper/report/${r.id}`)}>查看报告</Button>}
      {r.status === 'done' && (
        <Button size="small" type="link" onClick={() => downloadReport(r.id, r.title, 'pdf').catch((e: Error) => toastError(e.message))}>
          下载PDF
        </Button>
      )}
      {r.status === 'pending' && <Button size="small" type="link" onClick={() => navigate(`/paper/submit/${r.id}`)}>去提交</Button>}
      <Button size="small" type="link" onClick={() => setRenaming({ id: r.id, title: r.title })}>重命名</Button>
      <DeleteTaskButton
        what="查重记录"
        verifiable
        status={r.status}
        onDelete={async () => {
          await deleteCheck(r.id)
          await refresh()
        }}
      />
    </Space>
  )

  const columns = [
    titleColumn(),
    { title: '字数', dataIndex: 'chars', key: 'chars', width: 90 },
    {
      title: '状态',
      key: 'status',
      width: 200,
      render: (_: unknown, r: CheckRecord) => <TaskStatusCell {...r} />,
    },
    {
      title: '总文字复制比',
      key: 'ratio',
      width: 120,
      render: (_: unknown, r: CheckRecord) => ratio(r),
    },
    { title: '提交时间', dataIndex: 'createdAt', key: 'createdAt', width: 160, render: (v: number) => formatDateTime(v) },
    {
      title: '操作',
      key: 'actions',
      width: 230,
      render: (_: unknown, r: CheckRecord) => actions(r),
    },
  ]

  return (
    <div className="page-card">
      <Card title="查重记录" extra={<Button type="primary" onClick={() => navigate('/papercheck/check')}>新建查重</Button>}>
        <ResponsiveTable<CheckRecord>
          rowKey="id"
          loading={list.isLoading}
          error={list.error}
          onRetry={() => void list.refetch()}
          columns={columns}
          dataSource={list.data?.records ?? []}
          scroll={{ x: 1040 }}
          pagination={{ current: page, pageSize: 10, total: list.data?.total ?? 0, onChange: setPage }}
          locale={{ emptyText: <Empty description="还没有查重记录" /> }}
          card={{
            title: (r) => r.title,
            fullTitle: (r) => r.title,
            status: (r) => <TaskStatusCell {...r} />,
            figure: (r) => (r.status === 'done' ? { label: '总文字复制比', value: ratio(r) } : null),
            meta: (r) => `${r.chars.toLocaleString('zh-CN')} 字 · ${formatDateTime(r.createdAt)}`,
            actions,
          }}
        />
      </Card>
      <Modal
        open={Boolean(renaming)}
        title="重命名"
        okText="保存"
        cancelText="取消"
        onCancel={() => setRenaming(null)}
        onOk={async () => {
          if (!renaming) return
          await updateTitle(renaming.id, renaming.title)
          setRenaming(null)
          await refresh()
        }}
      >
        <Input value={renaming?.title} maxLength={200} onChange={(e) => renaming && setRenaming({ ...renaming, title: e.target.value })} />
      </Modal>
    </div>
  )
}
