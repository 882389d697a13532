import { useContext, type ReactNode } from 'react'
import { ConfigProvider } from 'antd'
import useCardStyle from 'antd/es/card/style'
import useSize from 'antd/es/config-provider/hooks/useSize'
import useVariant from 'antd/es/form/hooks/useVariants'

interface Props {
  title?: ReactNode
  extra?: ReactNode
  className?: string
  children?: ReactNode
}

/**
 * antd's Card as a page frame uses it (title, extra, body), with the same markup, classes and
 * style, but without what `antd`'s Card always imports for its other features: Tabs (`tabList`)
 * and Skeleton (`loading`), about 14 kB gzip. The first route's check page uses it, so the first
 * screen loads less; pages that need tabs, a loading skeleton, actions or a cover use antd's Card.
 */
export default function PageCard({ title, extra, className, children }: Props) {
  const { getPrefixCls } = useContext(ConfigProvider.ConfigContext)
  const prefixCls = getPrefixCls('card')
  const [hashId, cssVarCls] = useCardStyle(prefixCls)
  const size = useSize<string | undefined>(undefined)
  const [variant] = useVariant('card')
  const classes = [
    prefixCls,
    variant !== 'borderless' && `${prefixCls}-bordered`,
    size === 'small' && `${prefixCls}-small`,
    className,
    hashId,
    cssVarCls,
  ]
  const hasHead = (title !== undefined && title !== null) || (extra !== undefined && extra !== null)
  return (
    <div className={classes.filter(Boolean).join(' ')}>
      {hasHead && (
        <div className={`${prefixCls}-head`}>
          <div className={`${prefixCls}-head-wrapper`}>
            {title !== undefined && title !== null && <div className={`${prefixCls}-head-title`}>{title}</div>}
            {extra !== undefined && extra !== null && <div className={`${prefixCls}-extra`}>{extra}</div>}
          </div>
        </div>
      )}
      {children !== undefined && children !== null && <div className={`${prefixCls}-body`}>{children}</div>}
    </div>
  )
}
