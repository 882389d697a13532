import { useContext, type MouseEventHandler, type ReactNode } from 'react'
import { ConfigProvider } from 'antd'
import Typography from 'antd/es/typography/Typography'

/**
 * antd's `Typography.Link` for a plain text link (same element, classes and style). antd's own
 * goes through Typography's base, which always brings ellipsis measuring, copy and edit support
 * (Tooltip, TextArea, icons: about 8 kB gzip); the login dialog, loaded on a visitor's first
 * screen, needs none of that.
 */
export default function TextLink({ onClick, children }: { onClick?: MouseEventHandler<HTMLElement>; children: ReactNode }) {
  const { getPrefixCls } = useContext(ConfigProvider.ConfigContext)
  return (
    <Typography component="a" className={`${getPrefixCls('typography')}-link`} onClick={onClick}>
      {children}
    </Typography>
  )
}
