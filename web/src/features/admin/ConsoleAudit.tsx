import { useState } from 'react'
import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { Card, Input, Tag } from 'antd'
import OperatorGate from './OperatorGate'
import { auditLog } from './api'
import { ACTION_LABELS, actionLabel } from './labels'
import type { AuditRow } from './types'
import ResponsiveTable from '../../components/ResponsiveTable'
import { formatDateTime } from '../../utils/format'

const PAGE_SIZE = 20

/** The log keeps actions by key (`user.disable`); a search for the name shown (停用) finds them. */
function actionKey(query: string): string {
  const named = Object.entries(ACTION_LABELS).find(([, label]) => query && label.includes(query))
  return named ? named[0] : query
}

/** A JSON text's value, or the text itself when it is not JSON. */
function parsed(json: string): unknown {
  try {
    return JSON.parse(json) as unknown
  } catch {
    return json
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * What an entry changed, as short readable text: when both sides are objects, only the keys
 * that differ (a price change shows the one price, not the whole table).
 */
export function changedPart(json: string, other: string): string {
  if (!json) return ''
  const value = parsed(json)
  const against = parsed(other)
  if (isObject(value) && isObject(against)) {
    const changed = Object.fromEntries(Object.entries(value).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(against[k])))
    if (Object.keys(changed).length > 0) return JSON.stringify(changed, null, 1).replace(/\n\s*/g, ' ')
  }
  return typeof value === 'string' ? value : JSON.stringify(value, null, 1).replace(/\n\s*/g, ' ')
}

function Change({ json, other }: { json: string; other: string }) {
  const text = changedPart(json, other)
  return text ? <code className="audit-change">{text}</code> : <span className="muted">—</span>
}

function AuditBody() {
  const [query, setQuery] = useState('')
  const [page, setPage] = useState(1)
  const { data, error, refetch, isFetching } = useQuery({
    queryKey: ['admin', 'audit', query, page],
    queryFn: () => auditLog(actionKey(query), page, PAGE_SIZE),
    placeholderData: keepPreviousData,
  })
  return (
    <Card
      title="操作日志"
      extra={
        <Input.Search
          allowClear
          placeholder="按操作人、操作或对象搜索"
          onSearch={(v) => {
            setQuery(v.trim())
            setPage(1)
          }}
          style={{ width: 240 }}
        />
      }
    >
      <p className="muted">运营后台的每一次改动都记录在此，只增不改：任何人（包括运营人员）都无法修改或删除记录。</p>
      <ResponsiveTable<AuditRow>
        rowKey="id"
        loading={isFetching && !data}
        error={error as Error | null}
        onRetry={() => refetch()}
        dataSource={data?.records ?? []}
        scroll={{ x: 900 }}
        locale={{ emptyText: query ? '没有匹配的记录' : '还没有操作记录' }}
        pagination={{ current: page, pageSize: PAGE_SIZE, total: data?.total ?? 0, onChange: setPage, showSizeChanger: false }}
        columns={[
          { title: '时间', dataIndex: 'createdAt', width: 160, render: formatDateTime },
          { title: '操作人', dataIndex: 'actorName', width: 110 },
          { title: '操作', dataIndex: 'action', width: 120, render: (a: string) => <Tag>{actionLabel(a)}</Tag> },
          { title: '对象', dataIndex: 'target', width: 200, ellipsis: true },
          { title: '变更前', dataIndex: 'before', render: (v: string, e) => <Change json={v} other={e.after} /> },
          { title: '变更后', dataIndex: 'after', render: (v: string, e) => <Change json={v} other={e.before} /> },
        ]}
        card={{
          title: (e) => `${actionLabel(e.action)}：${e.target}`,
          meta: (e) => `${e.actorName} · ${formatDateTime(e.createdAt)}`,
          figure: (e) => (e.after ? { label: '变更后', value: <Change json={e.after} other={e.before} /> } : null),
        }}
        cardTestId="audit-card"
      />
    </Card>
  )
}

/** /admin/audit: every console action, who, when, what, before → after. */
export default function ConsoleAudit() {
  return (
    <OperatorGate>
      <div className="page-card">
        <AuditBody />
      </div>
    </OperatorGate>
  )
}
