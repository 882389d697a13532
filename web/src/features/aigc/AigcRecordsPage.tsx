import { useState } from 'react'
import { Button, Card, Empty, Space } from 'antd'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useNavigate } from 'react-router'
import { aigcDelete, aigcDownload, aigcList } from './api'
import type { AigcRecord } from './types'
import PayModal from './PayModal'
import { aiRateColor } from './AigcReportPage'
import ResponsiveTable, { titleColumn } from '../../components/ResponsiveTable'
import { DeleteTaskButton, TaskStatusCell, isUnderway } from '../../components/TaskStatus'
import { useUserStore } from '../../stores/user'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { formatDateTime } from '../../utils/format'
import { toastError } from '../../utils/feedback'

/** /aigccheck/list — the user's AI-text detections with live progress, AI rate and actions. */
export default function AigcRecordsPage() {
  const token = useUserStore((s) => s.token)
  const openLogin = useLoginDialogStore((s) => s.open)
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const [page, setPage] = useState(1)
  const [paying, setPaying] = useState<{ id: number; rerun: boolean } | null>(null)
  const list = useQuery({
    queryKey: ['aigc', page],
    queryFn: () => aigcList(page, 10),
    enabled: Boolean(token),
    refetchInterval: (q) => (q.state.data?.records.some((r) => isUnderway(r.status)) ? 2000 : false),
  })
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['aigc'] })

  if (!token) {
    return (
      <div className="page-card">
        <Card>
          <Empty description="登录后查看您的 AIGC 检测记录">
            <Button type="primary" onClick={() => openLogin()}>登录</Button>
          </Empty>
        </Card>
      </div>
    )
  }

  const rate = (r: AigcRecord) =>
    r.aiRate != null && !r.notice ? (
      <b data-testid="aigc-rate" style={{ color: aiRateColor(r.aiRate) }}>{r.aiRate.toFixed(1)}%</b>
    ) : r.status === 'done' ? (
      <span className="muted" title={r.notice ?? ''}>文本过短</span>
    ) : (
      '—'
    )
  const actions = (r: AigcRecord) => (
    <Space size={4} wrap>
      {r.status === 'done' && <Button size="small" type="link" onClick={() => navigate(`/aigccheck/content/${r.id}`)}>查看报告</Button>}
      {r.status === 'done' && (
        <Button size="small" type="link" onClick={() => aigcDownload(r.id, r.title).catch((e: Error) => toastError(e.message))}>
          下载PDF
        </Button>
      )}
      {r.status === 'pending' && <Button size="small" type="link" onClick={() => setPaying({ id: r.id, rerun: false })}>去支付</Button>}
      {(r.status === 'done' || r.status === 'failed' || r.status === 'cancelled') && (
        <Button size="small" type="link" onClick={() => setPaying({ id: r.id, rerun: true })}>重新检测</Button>
      )}
      <DeleteTaskButton
        what="检测记录"
        verifiable
        status={r.status}
        onDelete={async () => {
          await aigcDelete(r.id)
          await refresh()
        }}
      />
    </Space>
  )

  const columns = [
    titleColumn(),
    { title: '字数', dataIndex: 'chars', key: 'chars', width: 90 },
    { title: '状态', key: 'status', width: 200, render: (_: unknown, r: AigcRecord) => <TaskStatusCell {...r} /> },
    {
      title: 'AIGC占比',
      key: 'rate',
      width: 120,
      render: (_: unknown, r: AigcRecord) => rate(r),
    },
    { title: '提交时间', dataIndex: 'createdAt', key: 'createdAt', width: 160, render: (v: number) => formatDateTime(v) },
    {
      title: '操作',
      key: 'actions',
      width: 250,
      render: (_: unknown, r: AigcRecord) => actions(r),
    },
  ]

  return (
    <div className="page-card">
      <Card title="AIGC检测记录" extra={<Button type="primary" onClick={() => navigate('/aigccheck/check')}>新建检测</Button>}>
        <ResponsiveTable<AigcRecord>
          rowKey="id"
          loading={list.isLoading}
          error={list.error}
          onRetry={() => void list.refetch()}
          columns={columns}
          dataSource={list.data?.records ?? []}
          scroll={{ x: 1060 }}
          pagination={{ current: page, pageSize: 10, total: list.data?.total ?? 0, onChange: setPage }}
          locale={{ emptyText: <Empty description="还没有 AIGC 检测记录" /> }}
          card={{
            title: (r) => r.title,
            fullTitle: (r) => r.title,
            status: (r) => <TaskStatusCell {...r} />,
            figure: (r) => (r.status === 'done' ? { label: 'AI率（AIGC占比）', value: rate(r) } : null),
            meta: (r) => `${r.chars.toLocaleString('zh-CN')} 字 · ${formatDateTime(r.createdAt)}`,
            actions,
          }}
        />
      </Card>
      <PayModal
        id={paying?.id ?? null}
        rerun={paying?.rerun}
        onClose={() => setPaying(null)}
        onPaid={() => {
          setPaying(null)
          void refresh()
        }}
      />
    </div>
  )
}
