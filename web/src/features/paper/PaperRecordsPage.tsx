import { useState } from 'react'
import { Button, Card, Empty, Progress, Space, Tag } from 'antd'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useNavigate } from 'react-router'
import { paperDelete, paperList } from './api'
import { STATE_LABEL, isBusy, type PaperRecord } from './types'
import ResponsiveTable, { titleColumn } from '../../components/ResponsiveTable'
import { DeleteTaskButton } from '../../components/TaskStatus'
import { useUserStore } from '../../stores/user'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { formatDateTime, formatFen } from '../../utils/format'
import { formatCharge } from '../order/paysWith'

function StateCell({ r }: { r: PaperRecord }) {
  return (
    <div>
      <Tag color={STATE_LABEL[r.state].color}>{STATE_LABEL[r.state].label}</Tag>
      {isBusy(r.state) && (
        <>
          <Progress percent={r.progress} size="small" />
          <div className="muted">{r.phase}</div>
        </>
      )}
      {r.error && !isBusy(r.state) && <div className="muted">{r.error}</div>}
    </div>
  )
}

/** /aipaper/list and /paperwirte/report — the user's generated papers with live progress. */
export default function PaperRecordsPage() {
  const token = useUserStore((s) => s.token)
  const openLogin = useLoginDialogStore((s) => s.open)
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const [page, setPage] = useState(1)
  const list = useQuery({
    queryKey: ['papers', page],
    queryFn: () => paperList(page, 10),
    enabled: Boolean(token),
    refetchInterval: (q) => (q.state.data?.records.some((r) => isBusy(r.state)) ? 2000 : false),
  })
  if (!token) {
    return (
      <div className="page-card">
        <Card>
          <Empty description="登录后查看您生成的论文">
            <Button type="primary" onClick={() => openLogin()}>登录</Button>
          </Empty>
        </Card>
      </div>
    )
  }
  const open = (r: PaperRecord) => navigate(r.state.startsWith('outline') ? `/aipaper/outline/${r.id}` : `/aipaper/content/${r.id}`)
  const actions = (r: PaperRecord) => (
    <Space size={4} wrap>
      <Button size="small" type="link" onClick={() => open(r)}>{r.state === 'outline_ready' ? '确认大纲' : r.state.startsWith('outline') ? '查看大纲' : '查看正文'}</Button>
      {r.state === 'done' && <Button size="small" type="link" onClick={() => navigate(`/paperwirte/biye?id=${r.id}`)}>毕业材料</Button>}
      <DeleteTaskButton
        what="论文"
        status={r.status}
        onDelete={async () => {
          await paperDelete(r.id)
          await queryClient.invalidateQueries({ queryKey: ['papers'] })
        }}
      />
    </Space>
  )
  const length = (r: PaperRecord) => (r.chars ? `${r.chars.toLocaleString('zh-CN')} / ${r.words.toLocaleString('zh-CN')} 字` : `目标 ${r.words.toLocaleString('zh-CN')} 字`)
  const columns = [
    titleColumn(),
    { title: '类型', key: 'kind', width: 120, render: (_: unknown, r: PaperRecord) => `${r.degree}${r.kind === 'article' ? '学术论文' : '毕业论文'}` },
    { title: '字数', key: 'chars', width: 140, render: (_: unknown, r: PaperRecord) => length(r) },
    { title: '状态', key: 'state', width: 180, render: (_: unknown, r: PaperRecord) => <StateCell r={r} /> },
    { title: '费用', key: 'fee', width: 80, render: (_: unknown, r: PaperRecord) => (r.chargedFen || r.chargedUnits ? <span title={r.refundedFen ? `字数不足，已退回 ${formatFen(r.refundedFen)}` : undefined}>{formatCharge(r.chargedFen, r.chargedUnits, '篇')}</span> : '—') },
    { title: '创建时间', dataIndex: 'createdAt', key: 'createdAt', width: 150, render: (v: number) => formatDateTime(v) },
    { title: '操作', key: 'actions', width: 150, render: (_: unknown, r: PaperRecord) => actions(r) },
  ]
  return (
    <div className="page-card">
      <Card title="我的论文" extra={<Button type="primary" onClick={() => navigate('/aipaper/gc')}>生成新论文</Button>}>
        <ResponsiveTable<PaperRecord>
          rowKey="id"
          loading={list.isLoading}
          error={list.error}
          onRetry={() => void list.refetch()}
          columns={columns}
          dataSource={list.data?.records ?? []}
          scroll={{ x: 980 }}
          pagination={{ current: page, pageSize: 10, total: list.data?.total ?? 0, onChange: setPage }}
          locale={{ emptyText: <Empty description="还没有生成过论文" /> }}
          card={{
            title: (r) => r.title,
            fullTitle: (r) => r.title,
            status: (r) => <StateCell r={r} />,
            meta: (r) => `${length(r)} · ${formatDateTime(r.createdAt)}`,
            actions,
          }}
        />
      </Card>
    </div>
  )
}
