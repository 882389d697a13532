import type { Key, ReactNode } from 'react'
import { Button, Empty, Pagination, Spin, Table, Tooltip } from 'antd'
import type { TableProps } from 'antd'
import { useIsPhone } from '../utils/useMediaQuery'

/** How one row reads as a card on a phone. */
export interface CardSpec<T> {
  title: (row: T) => ReactNode
  /** The full title for the tooltip of a title cut short. */
  fullTitle?: (row: T) => string
  /** Beside the title, e.g. the task's status. */
  status?: (row: T) => ReactNode
  /** The key figure, large: 复制比, AI率, an amount. */
  figure?: (row: T) => { label: string; value: ReactNode } | null
  /** Small print: characters, time. */
  meta?: (row: T) => ReactNode
  actions?: (row: T) => ReactNode
}

type Props<T> = TableProps<T> & {
  card: CardSpec<T>
  /** data-testid of each card. */
  cardTestId?: string
  /** The list failed to load: said so (instead of "nothing yet"), with a retry. */
  error?: Error | null
  onRetry?: () => void
}

function keyOf<T>(row: T, index: number, rowKey: TableProps<T>['rowKey']): Key {
  if (typeof rowKey === 'function') return rowKey(row, index) as Key
  if (typeof rowKey === 'string') return (row as Record<string, Key>)[rowKey] ?? index
  return index
}

/**
 * A table on wider screens; on a phone (< 768 px) the same rows as cards — title, status, the key
 * figure and the actions — instead of a table squeezed into a sideways scroll.
 */
export default function ResponsiveTable<T extends object>({ card, cardTestId = 'record-card', error, onRetry, ...props }: Props<T>) {
  const phone = useIsPhone()
  const failed = error ? (
    <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={`加载失败：${error.message}`} data-testid="list-error">
      {onRetry && <Button onClick={onRetry}>重试</Button>}
    </Empty>
  ) : null
  const table: TableProps<T> = failed ? { ...props, locale: { ...props.locale, emptyText: failed } } : props
  if (!phone) return <Table<T> {...table} />

  const rows = (table.dataSource ?? []) as readonly T[]
  const loading = typeof table.loading === 'object' ? Boolean(table.loading.spinning) : Boolean(table.loading)
  const pagination = table.pagination || undefined
  const empty = table.locale?.emptyText
  return (
    <div className="record-cards">
      {loading && rows.length === 0 ? (
        <Spin className="page-spin" />
      ) : rows.length === 0 ? (
        <div className="record-cards-empty">{typeof empty === 'function' ? empty() : empty}</div>
      ) : (
        rows.map((row, index) => {
          const figure = card.figure?.(row)
          return (
            <div className="record-card" data-testid={cardTestId} key={keyOf(row, index, table.rowKey)}>
              <div className="record-card-head">
                <div className="record-card-title" title={card.fullTitle?.(row)}>
                  {card.title(row)}
                </div>
                {card.status && <div className="record-card-status">{card.status(row)}</div>}
              </div>
              {figure && (
                <div className="record-card-figure">
                  <span className="record-card-figure-label">{figure.label}</span>
                  <span className="record-card-figure-value">{figure.value}</span>
                </div>
              )}
              {card.meta && <div className="record-card-meta">{card.meta(row)}</div>}
              {card.actions && <div className="record-card-actions">{card.actions(row)}</div>}
            </div>
          )
        })
      )}
      {pagination && (pagination.total ?? 0) > (pagination.pageSize ?? 10) && (
        <Pagination
          className="record-cards-pagination"
          simple
          current={pagination.current}
          pageSize={pagination.pageSize}
          total={pagination.total}
          onChange={pagination.onChange}
        />
      )}
    </div>
  )
}

/**
 * The title column of the record tables: a fixed minimum width so it never collapses to "t…",
 * cut with an ellipsis, the full title in a tooltip.
 */
export function titleColumn(width = 240) {
  return {
    title: '标题',
    dataIndex: 'title',
    key: 'title',
    width,
    ellipsis: { showTitle: false },
    render: (title: string) => (
      <Tooltip placement="topLeft" title={title}>
        <span className="cell-title">{title}</span>
      </Tooltip>
    ),
  }
}
