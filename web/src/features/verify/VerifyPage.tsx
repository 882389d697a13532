import { useEffect, useState } from 'react'
import { useSearchParams } from 'react-router'
import { Alert, Button, Card, Descriptions, Input, Result, Space, Typography } from 'antd'
import { SafetyCertificateOutlined } from '@ant-design/icons'
import { verifyReport } from '../check/api'
import type { VerifiedReport } from '../check/types'
import { formatDateTime } from '../../utils/format'
import { useSiteStore } from '../../stores/site'
import type { ApiError } from '../../api/client'

const pct = (v: number | null) => (v == null ? '—' : `${v.toFixed(1)}%`)

/** /verify?code=… — public, not in any menu: confirms a report by the code on its cover and
 * shows its headline figures, never its text. */
export default function VerifyPage() {
  const zoneLabel = useSiteStore((s) => s.timeZoneLabel)
  const [params, setParams] = useSearchParams()
  const [code, setCode] = useState(params.get('code') ?? '')
  const [result, setResult] = useState<VerifiedReport | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [loading, setLoading] = useState(false)

  const check = async (value: string) => {
    const typed = value.trim()
    if (!typed) {
      setError('请输入报告封面上的验证码')
      return
    }
    setLoading(true)
    setError(null)
    setResult(null)
    try {
      setResult(await verifyReport(typed))
      setParams({ code: typed }, { replace: true })
    } catch (e) {
      setError((e as ApiError).message)
    } finally {
      setLoading(false)
    }
  }

  useEffect(() => {
    document.title = '报告真伪核验 - 文鉴'
    const initial = params.get('code')
    if (initial) void check(initial)
    // Only the code in the address on arrival is checked automatically.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [])

  return (
    <div className="verify-page">
      <Card>
        <Typography.Title level={3}><SafetyCertificateOutlined /> 报告真伪核验</Typography.Title>
        <Typography.Paragraph type="secondary">
          输入文鉴查重报告或 AIGC 检测报告封面上的 16 位验证码（不区分大小写，可含短横线），核验报告是否由本站生成，并查看其主要指标。核验不会显示论文正文。
        </Typography.Paragraph>
        <Space.Compact style={{ width: '100%' }}>
          <Input
            value={code}
            onChange={(e) => setCode(e.target.value)}
            onPressEnter={() => check(code)}
            placeholder="例如 ABCD-EFGH-JKLM-NPQR"
            maxLength={40}
            data-testid="verify-input"
          />
          <Button type="primary" loading={loading} onClick={() => check(code)}>核验</Button>
        </Space.Compact>
        {error && <Result status="warning" title="核验未通过" subTitle={error} />}
        {result && (
          <div data-testid="verify-result">
            <Result
              status="success"
              title="报告真实有效"
              subTitle={`${result.kind === 'aigc' ? 'AIGC 检测报告' : '文字复制比检测报告'} · 报告编号 ${result.reportNumber}`}
            />
            {result.deletedAt && (
              <Alert
                className="mb-s"
                type="info"
                showIcon
                data-testid="verify-deleted"
                message={`该报告由本站生成且真实有效；报告所有者已于 ${formatDateTime(result.deletedAt)} 删除了这条检测记录。`}
              />
            )}
            <Descriptions column={1} size="small" bordered>
              <Descriptions.Item label="论文题目">{result.title}</Descriptions.Item>
              <Descriptions.Item label="作者">{result.author || '（未填写）'}</Descriptions.Item>
              <Descriptions.Item label={`检测时间（${zoneLabel}）`}>{formatDateTime(result.checkedAt)}</Descriptions.Item>
              <Descriptions.Item label="检测字数">{result.chars} 字</Descriptions.Item>
              {result.kind === 'aigc' ? (
                <Descriptions.Item label="AIGC 占比">
                  <b data-testid="verify-ratio">{result.aiRate == null ? '文本过短，未给出' : pct(result.aiRate)}</b>
                </Descriptions.Item>
              ) : (
                <>
                  <Descriptions.Item label="总文字复制比"><b data-testid="verify-ratio">{pct(result.ratioTotal)}</b></Descriptions.Item>
                  <Descriptions.Item label="去除引用文献复制比">{pct(result.ratioExcludingQuotes)}</Descriptions.Item>
                  <Descriptions.Item label="去除本人已发表文献复制比">{pct(result.ratioExcludingOwn)}</Descriptions.Item>
                  <Descriptions.Item label="单篇最大文字复制比">{pct(result.ratioMaxSingleSource)}</Descriptions.Item>
                  <Descriptions.Item label="重复字数">{result.copiedChars ?? 0} 字</Descriptions.Item>
                  <Descriptions.Item label="相似来源">{result.sourceCount ?? 0} 篇</Descriptions.Item>
                </>
              )}
              {result.settings.length > 0 && (
                <Descriptions.Item label="检测设置">
                  {result.settings.map((line) => <div key={line}>{line}</div>)}
                </Descriptions.Item>
              )}
            </Descriptions>
          </div>
        )}
      </Card>
    </div>
  )
}
