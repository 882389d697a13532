import { Alert, Typography } from 'antd'
import { useQuery } from '@tanstack/react-query'
import { rewriteEngine } from './api'
import type { RewriteEngine } from './types'

/** The rewriting model of this server, asked once per page load (it changes only when the operator restarts the server). */
export function useRewriteEngine() {
  return useQuery<RewriteEngine>({ queryKey: ['rewrite-engine'], queryFn: rewriteEngine, staleTime: Infinity, retry: false })
}

/**
 * What the submit pages say about the model that will rewrite: the local small model's limits (and what the
 * administrator can do about them), the endpoint model's name, or why nothing can rewrite here.
 */
export default function EngineNotice() {
  const engine = useRewriteEngine().data
  if (!engine) return null
  if (engine.source === 'local') {
    return (
      <Alert
        className="mb"
        type="info"
        showIcon
        data-testid="rewrite-engine-notice"
        data-engine-source="local"
        title={`当前由本地小模型（${engine.model ?? '本地模型'}）改写：它能降低复制比，但常写出不通顺或改变原意的句子；每段改写都经术语、通顺度、句子对应与意思核对，未通过的段落不会被采用并退还费用，需要您手动修改。`}
        description="管理员配置兼容 OpenAI 接口的外部模型服务（llm_base_url、llm_model）后，改写质量更高，并经过同样的核对。"
      />
    )
  }
  if (engine.source === 'endpoint') {
    return (
      <Typography.Paragraph type="secondary" className="mb" data-testid="rewrite-engine-notice" data-engine-source="endpoint">
        改写模型：{engine.model ?? '外部模型'}（外部模型服务），每段改写经同样的核对。
      </Typography.Paragraph>
    )
  }
  return (
    <Alert
      className="mb"
      type="warning"
      showIcon
      data-testid="rewrite-engine-notice"
      data-engine-source="none"
      title="本站暂时无法改写"
      description={engine.unavailable ?? '管理员尚未配置改写模型。'}
    />
  )
}
