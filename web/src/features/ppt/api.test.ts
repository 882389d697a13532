import { describe, expect, it } from 'vitest'
import { formBody } from './api'
import type { DeckForm } from './types'

const base: DeckForm = {
  title: '题目',
  source: 'outline',
  outline: '1 绪论\n要点',
  kind: 'defence',
  slides: 15,
  school: '华东理工学院',
  presenter: '李明',
  supervisor: '王强',
  date: '2026年5月',
}

describe('the deck form as sent', () => {
  it('goes as plain fields without a file, the outline only for an outline', () => {
    const { data } = formBody(base)
    expect(data).toMatchObject({ title: '题目', source: 'outline', outline: '1 绪论\n要点', slides: '15', school: '华东理工学院' })
    const upload = formBody({ ...base, source: 'paper', sourceId: 7 }).data as Record<string, string>
    expect(upload.outline).toBe('')
    expect(upload.sourceId).toBe('7')
  })

  it('goes as multipart with the paper and the logo', () => {
    const file = new File(['x'], '论文.docx')
    const logo = new File(['y'], 'logo.png', { type: 'image/png' })
    const { data } = formBody({ ...base, source: 'upload', file, logo, id: 3 })
    expect(data).toBeInstanceOf(FormData)
    const form = data as FormData
    expect((form.get('file') as File).name).toBe('论文.docx')
    expect((form.get('logo') as File).name).toBe('logo.png')
    expect(form.get('id')).toBe('3')
    expect(form.get('kind')).toBe('defence')
  })
})
