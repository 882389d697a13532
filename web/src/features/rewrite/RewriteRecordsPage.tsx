import { useState } from 'react'
import { Button, Card, Empty, Space, Tooltip } from 'antd'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useNavigate } from 'react-router'
import { rewriteDelete, rewriteDownload, rewriteList, machineList, machineSubmit, type PasteKind, type RecordGoal } from './api'
import type { RewriteRecord } from './types'
import RewritePayModal from './RewritePayModal'
import { percent } from './figures'
import ResponsiveTable from '../../components/ResponsiveTable'
import { DeleteTaskButton, TaskStatusCell, isUnderway } from '../../components/TaskStatus'
import { useUserStore } from '../../stores/user'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { formatDateTime } from '../../utils/format'
import { toastError } from '../../utils/feedback'

/**
 * /papermachine/list, /proaigcsubmit/list, /aigc/list — the user's paper rewrites; with `paste`, /papermachine/cnki
 * (paragraph rewriting) and /machine/list (smart rewriting) — with live progress and measured figures.
 */
export default function RewriteRecordsPage({
  contentPath,
  newPath,
  paste,
  goal,
  title,
}: {
  contentPath: string
  newPath: string
  paste?: PasteKind
  /** The menu's kind: its records only, with its own figure. */
  goal?: RecordGoal
  title?: string
}) {
  const token = useUserStore((s) => s.token)
  const openLogin = useLoginDialogStore((s) => s.open)
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const [page, setPage] = useState(1)
  const [paying, setPaying] = useState<{ id: number; rerun: boolean } | null>(null)
  const list = useQuery({
    queryKey: ['rewrite', paste ?? 'paper', goal ?? 'all', page],
    queryFn: () => (paste ? machineList(paste, page, 10) : rewriteList(page, 10, goal)),
    enabled: Boolean(token),
    refetchInterval: (q) => (q.state.data?.records.some((r) => isUnderway(r.status)) ? 2000 : false),
  })
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['rewrite'] })

  if (!token) {
    return (
      <div className="page-card">
        <Card>
          <Empty description="登录后查看您的改写记录">
            <Button type="primary" onClick={() => openLogin()}>登录</Button>
          </Empty>
        </Card>
      </div>
    )
  }

  /** What the rewrite achieved, measured: 复制比 and/or AI率, before → after. */
  const figures = (r: RewriteRecord) => {
    if (r.similarityBefore == null && r.aiBefore == null) return null
    return (
      <span className="rewrite-figures-cell">
        {r.similarityBefore != null && goal !== 'aigc' && (
          <span data-testid="rewrite-similarity">
            复制比 {percent(r.similarityBefore)} → <b>{percent(r.similarityAfter)}</b>
          </span>
        )}
        {r.aiBefore != null && goal !== 'similarity' && (
          <span data-testid="rewrite-ai">
            AI率 {percent(r.aiBefore)} → <b>{percent(r.aiAfter)}</b>
          </span>
        )}
      </span>
    )
  }
  const actions = (r: RewriteRecord) => (
    <Space size={4} wrap>
      {r.status === 'done' && <Button size="small" type="link" onClick={() => navigate(`${contentPath}/${r.id}`)}>查看对比</Button>}
      {paste && isUnderway(r.status) && (
        <Button size="small" type="link" onClick={() => navigate(`${newPath}?id=${r.id}`)}>
          查看进度
        </Button>
      )}
      {r.status === 'done' && (
        <Button size="small" type="link" onClick={() => rewriteDownload(r.id, r.title).catch((e: Error) => toastError(e.message))}>
          下载Word
        </Button>
      )}
      {r.status === 'pending' && (
        <Button size="small" type="link" onClick={() => (paste ? setPaying({ id: r.id, rerun: false }) : navigate(`${newPath}?draft=${r.id}`))}>
          去支付
        </Button>
      )}
      {(r.status === 'done' || r.status === 'failed' || r.status === 'cancelled') && (
        <Button size="small" type="link" onClick={() => setPaying({ id: r.id, rerun: true })}>重新改写</Button>
      )}
      <DeleteTaskButton
        what="改写记录"
        status={r.status}
        onDelete={async () => {
          await rewriteDelete(r.id)
          await refresh()
        }}
      />
    </Space>
  )
  const detail = (r: RewriteRecord) => `${r.goalLabel} · ${r.chars.toLocaleString('zh-CN')} 字`

  // The title column keeps a minimum width (never "t…"), the goal and length beneath it, so the
  // whole table fits a 1366 px screen beside the sidebar without scrolling sideways.
  const columns = [
    {
      title: '标题',
      key: 'title',
      width: 260,
      ellipsis: { showTitle: false },
      render: (_: unknown, r: RewriteRecord) => (
        <div className="cell-title-block">
          <Tooltip placement="topLeft" title={r.title}>
            <span className="cell-title">{r.title}</span>
          </Tooltip>
          <div className="muted cell-sub">{detail(r)}</div>
        </div>
      ),
    },
    { title: '状态', key: 'status', width: 160, render: (_: unknown, r: RewriteRecord) => <TaskStatusCell {...r} running="改写中" /> },
    { title: '效果（改写前→后）', key: 'figures', width: 170, render: (_: unknown, r: RewriteRecord) => figures(r) ?? '—' },
    { title: '采用', key: 'accepted', width: 96, render: (_: unknown, r: RewriteRecord) => (r.accepted != null ? `${r.accepted}/${r.paragraphs} 段` : '—') },
    { title: '提交时间', dataIndex: 'createdAt', key: 'createdAt', width: 150, render: (v: number) => formatDateTime(v) },
    { title: '操作', key: 'actions', width: 220, render: (_: unknown, r: RewriteRecord) => actions(r) },
  ]

  return (
    <div className="page-card">
      <Card title={title ?? (paste === 'cnki' ? '段落改写记录' : paste === 'smart' ? '智能改写记录' : '改写记录')} extra={<Button type="primary" onClick={() => navigate(newPath)}>新建改写</Button>}>
        <ResponsiveTable<RewriteRecord>
          rowKey="id"
          loading={list.isLoading}
          error={list.error}
          onRetry={() => void list.refetch()}
          columns={columns}
          dataSource={list.data?.records ?? []}
          scroll={{ x: 1056 }}
          pagination={{ current: page, pageSize: 10, total: list.data?.total ?? 0, onChange: setPage }}
          locale={{ emptyText: <Empty description="还没有改写记录" /> }}
          card={{
            title: (r) => r.title,
            fullTitle: (r) => r.title,
            status: (r) => <TaskStatusCell {...r} running="改写中" />,
            figure: (r) => {
              const value = figures(r)
              return value ? { label: '改写前 → 后', value } : null
            },
            meta: (r) =>
              `${detail(r)}${r.accepted != null ? ` · 采用 ${r.accepted}/${r.paragraphs} 段` : ''} · ${formatDateTime(r.createdAt)}`,
            actions,
          }}
        />
      </Card>
      <RewritePayModal
        id={paying?.id ?? null}
        rerun={paying?.rerun}
        submit={paste ? (id, headers) => machineSubmit(paste, id, headers) : undefined}
        onClose={() => setPaying(null)}
        onPaid={() => {
          setPaying(null)
          void refresh()
        }}
      />
    </div>
  )
}
