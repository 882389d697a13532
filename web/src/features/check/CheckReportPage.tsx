import { Button, Card, Result, Spin } from 'antd'
import { useQuery } from '@tanstack/react-query'
import { useNavigate, useParams } from 'react-router'
import { checkRecord } from './api'
import ReportView from './ReportView'

/** /paper/report/:id — one check's report on its own address: it can be bookmarked, refreshed and
 * shared with the browser's Back; the records list links here. */
export default function CheckReportPage() {
  const id = Number(useParams().id)
  const navigate = useNavigate()
  const valid = Number.isInteger(id) && id > 0
  const record = useQuery({ queryKey: ['check-record', id], queryFn: () => checkRecord(id), enabled: valid })
  const back = <Button onClick={() => navigate('/paper/report')}>返回查重记录</Button>
  if (!valid) return <Result status="404" title="报告不存在" subTitle="链接中的报告编号无效。" extra={back} />
  if (record.isLoading) return <Spin className="page-spin" />
  if (record.error || !record.data) {
    return <Result status="warning" title="无法打开该报告" subTitle={record.error?.message ?? '报告加载失败'} extra={back} />
  }
  const r = record.data
  if (r.status !== 'done') {
    const why =
      r.status === 'failed'
        ? `检测失败：${r.error ?? '原因未知'}`
        : r.status === 'cancelled'
          ? `检测已取消：${r.error ?? '原因未知'}`
          : r.status === 'pending'
            ? '这篇论文还没有提交检测。'
            : '检测还在进行中，完成后即可查看报告。'
    return <Result status="info" title="报告尚未生成" subTitle={why} extra={back} />
  }
  return (
    <div className="page-card">
      <Card title={<span data-testid="report-title">查重报告：{r.title}</span>} extra={<Button type="link" onClick={() => navigate('/paper/report')}>查重记录</Button>}>
        <ReportView id={id} />
      </Card>
    </div>
  )
}
