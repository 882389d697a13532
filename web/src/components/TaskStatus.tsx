import { App, Button, Progress, Tag } from 'antd'
import type { TaskStatus } from '../features/check/types'

export const STATUS: Record<TaskStatus, { label: string; color: string }> = {
  pending: { label: '待支付', color: 'default' },
  queued: { label: '排队中', color: 'blue' },
  running: { label: '检测中', color: 'processing' },
  done: { label: '已完成', color: 'green' },
  failed: { label: '失败', color: 'red' },
  cancelled: { label: '已取消', color: 'default' },
}

export const isUnderway = (status: TaskStatus) => status === 'queued' || status === 'running'

/** A task's status for the records tables: live progress while underway, the reason when failed. */
export function TaskStatusCell({
  status,
  progress,
  phase,
  error,
  running,
}: {
  status: TaskStatus
  progress: number
  phase: string
  error: string | null
  /** What a running task of this family is doing (改写中); 检测中 otherwise. */
  running?: string
}) {
  if (isUnderway(status)) {
    return (
      <div>
        <Tag color={STATUS[status].color}>{status === 'running' && running ? running : STATUS[status].label}</Tag>
        <Progress percent={progress} size="small" />
        <div className="muted">{phase}</div>
      </div>
    )
  }
  return (
    <span>
      <Tag color={STATUS[status].color}>{STATUS[status].label}</Tag>
      {status === 'failed' && <div className="muted">{error}（费用已退回）</div>}
      {status === 'cancelled' && error && <div className="muted">{error}</div>}
    </span>
  )
}

/** 删除 with a confirmation that says what happens: an unfinished task is cancelled and refunded. */
export function DeleteTaskButton({
  what,
  status,
  onDelete,
  verifiable = false,
}: {
  what: string
  status: TaskStatus
  onDelete: () => Promise<unknown>
  /** Its finished report carries a verification code, which stays valid after deletion. */
  verifiable?: boolean
}) {
  const { modal } = App.useApp()
  return (
    <Button
      size="small"
      type="link"
      danger
      onClick={() =>
        modal.confirm({
          title: `删除这条${what}？`,
          content: isUnderway(status)
            ? '检测尚未完成，删除后将取消检测并退回费用。'
            : verifiable && status === 'done'
              ? '记录、报告与上传的文件将从您的账户中删除。已下载或打印的正式报告仍可凭验证码核验，核验页会注明该记录已被您删除。'
              : '报告与上传的文件将一并删除。',
          okText: '删除',
          cancelText: '取消',
          onOk: onDelete,
        })
      }
    >
      删除
    </Button>
  )
}
