import { useState } from 'react'
import { Button, Card, Empty, Space, Table } from 'antd'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useNavigate } from 'react-router'
import { rewriteDelete, rewriteDownload, rewriteList, machineList, machineSubmit, type PasteKind } from './api'
import type { RewriteRecord } from './types'
import RewritePayModal from './RewritePayModal'
import { percent } from './figures'
import { DeleteTaskButton, TaskStatusCell, isUnderway } from '../../components/TaskStatus'
import { useUserStore } from '../../stores/user'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { formatDateTime } from '../../utils/format'
import { toastError } from '../../utils/feedback'

/**
 * /papermachine/list, /proaigcsubmit/list, /aigc/list — the user's paper rewrites; with `paste`, /papermachine/cnki
 * (paragraph rewriting) and /machine/list (smart rewriting) — with live progress and measured figures.
 */
export default function RewriteRecordsPage({ contentPath, newPath, paste }: { contentPath: string; newPath: string; paste?: PasteKind }) {
  const token = useUserStore((s) => s.token)
  const openLogin = useLoginDialogStore((s) => s.open)
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const [page, setPage] = useState(1)
  const [paying, setPaying] = useState<{ id: number; rerun: boolean } | null>(null)
  const list = useQuery({
    queryKey: ['rewrite', paste ?? 'paper', page],
    queryFn: () => (paste ? machineList(paste, page, 10) : rewriteList(page, 10)),
    enabled: Boolean(token),
    refetchInterval: (q) => (q.state.data?.records.some((r) => isUnderway(r.status)) ? 2000 : false),
  })
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['rewrite'] })

  if (!token) {
    return (
      <div className="page-card">
        <Card>
          <Empty description="登录后查看您的改写记录">
            <Button type="primary" onClick={openLogin}>登录</Button>
          </Empty>
        </Card>
      </div>
    )
  }

  const columns = [
    { title: '标题', dataIndex: 'title', key: 'title', ellipsis: true },
    { title: '目标', dataIndex: 'goalLabel', key: 'goal', width: 120 },
    { title: '字数', dataIndex: 'chars', key: 'chars', width: 80 },
    { title: '状态', key: 'status', width: 200, render: (_: unknown, r: RewriteRecord) => <TaskStatusCell {...r} /> },
    {
      title: '复制比（前→后）',
      key: 'similarity',
      width: 150,
      render: (_: unknown, r: RewriteRecord) =>
        r.similarityBefore != null ? (
          <span data-testid="rewrite-similarity">
            {percent(r.similarityBefore)} → <b>{percent(r.similarityAfter)}</b>
          </span>
        ) : (
          '—'
        ),
    },
    { title: '采用', key: 'accepted', width: 90, render: (_: unknown, r: RewriteRecord) => (r.accepted != null ? `${r.accepted}/${r.paragraphs} 段` : '—') },
    { title: '提交时间', dataIndex: 'createdAt', key: 'createdAt', width: 160, render: (v: number) => formatDateTime(v) },
    {
      title: '操作',
      key: 'actions',
      width: 240,
      render: (_: unknown, r: RewriteRecord) => (
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
      ),
    },
  ]

  return (
    <div className="page-card">
      <Card title={paste === 'cnki' ? '段落改写记录' : paste === 'smart' ? '智能改写记录' : '改写记录'} extra={<Button type="primary" onClick={() => navigate(newPath)}>新建改写</Button>}>
        <Table<RewriteRecord>
          rowKey="id"
          loading={list.isLoading}
          columns={columns}
          dataSource={list.data?.records ?? []}
          scroll={{ x: 1000 }}
          pagination={{ current: page, pageSize: 10, total: list.data?.total ?? 0, onChange: setPage }}
          locale={{ emptyText: <Empty description="还没有改写记录" /> }}
        />
      </Card>
      <RewritePayModal
        id={paying?.id ?? null}
        rerun={paying?.rerun}
        submit={paste ? (id) => machineSubmit(paste, id) : undefined}
        onClose={() => setPaying(null)}
        onPaid={() => {
          setPaying(null)
          void refresh()
        }}
      />
    </div>
  )
}
