import { useState } from 'react'
import { Badge, Tooltip } from 'antd'
import { BugOutlined } from '@ant-design/icons'
import { useErrorLogStore } from '../stores/errorLog'
import ErrorLogDialog from './ErrorLogDialog'

export default function ErrorLogButton() {
  const count = useErrorLogStore((s) => s.logs.length)
  const [open, setOpen] = useState(false)
  return (
    <>
      <Tooltip title="错误日志">
        <Badge count={count} size="small" offset={[-4, 4]}>
          <BugOutlined className="navbar-icon error-log-icon" onClick={() => setOpen(true)} aria-label="错误日志" />
        </Badge>
      </Tooltip>
      <ErrorLogDialog open={open} onClose={() => setOpen(false)} />
    </>
  )
}
